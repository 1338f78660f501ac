/**
 * Wire types of the `pytorchjob/api` REST endpoints.
 *
 * One convention for everything (the server's `job/wire.py`): camelCase keys
 * (the job body's are the `ptjob` CLI's long flags), times in seconds since
 * the epoch.
 *
 * @packageDocumentation
 */

/**
 * The job defaults the server applies when a field is left empty.
 */
export interface IJobDefaults {
  /**
   * Container image of a new job.
   */
  image: string;

  /**
   * Extended resource name used for GPUs, e.g. `nvidia.com/gpu`.
   */
  gpuResource: string;

  /**
   * Size of `/dev/shm` in every replica, as a Kubernetes quantity (`2Gi`);
   * the empty string turns it off.
   */
  shm: string;

  /**
   * PVC mounts a new job gets by default (in a cluster: the notebook's own).
   */
  pvc?: IPvcMount[];

  /**
   * Working directory of a new job, if the server suggests one (the local
   * backend: where a job without one starts).
   */
  workdir?: string | null;

  /**
   * The Kubernetes namespace new jobs go to (kubernetes backend).
   */
  namespace?: string;
}

/**
 * One field of the job body as `GET config` describes it: the server's field
 * table, so the form keeps no copy of choices and defaults.
 */
export interface IFieldInfo {
  /**
   * The form section it belongs to.
   */
  section: string;

  /**
   * The value the server uses when the field is absent (`null`: none).
   */
  default: unknown;

  /**
   * The values it may take, if it is a choice.
   */
  choices?: string[];

  /**
   * The choices of its items' properties (tolerations' `operator`, `effect`).
   */
  itemChoices?: Record<string, string[]>;

  /**
   * Whether `null` is a value (unset): the form leaves it empty.
   */
  nullable: boolean;

  /**
   * How the form edits it.
   */
  form: FieldCodec;

  /**
   * The label of a field the form does not describe itself (English; the
   * form translates it).
   */
  label?: string;

  /**
   * Its help (English; the form translates it).
   */
  hint?: string;
}

/**
 * How the form edits a field: one line of text, a whole number, a quantity,
 * key/value rows, a choice, a list of names, rows of several properties, or a
 * control of its own.
 */
export type FieldCodec =
  | 'text'
  | 'number'
  | 'quantity'
  | 'map'
  | 'choice'
  | 'list'
  | 'rows'
  | 'custom';

/**
 * The answer of `GET pytorchjob/api/config`.
 */
/**
 * A kind of job object the backend can run (e.g. a PyTorchJob).
 */
export interface IJobKind {
  /**
   * The object's `kind`, e.g. `PyTorchJob`.
   */
  kind: string;

  /**
   * Its `apiVersion`, e.g. `kubeflow.org/v1`.
   */
  apiVersion: string;

  /**
   * The job-body fields (wire names) this kind can express.
   */
  fields: string[];
}

export interface IConfig {
  /**
   * Version of the Python package serving the API.
   */
  version: string;

  /**
   * Where jobs run: `local` (processes on the server) or `kubernetes`.
   */
  backend: string;

  /**
   * Defaults for new jobs.
   */
  defaults: IJobDefaults;

  /**
   * The job kinds the backend runs, preferred first, each with the job-body
   * fields it can express (the form hides the others).
   */
  kinds: IJobKind[];

  /**
   * Absolute path of the Jupyter server's root directory, if the server says.
   */
  rootDir?: string;

  /**
   * Every field of the job body, by its name.
   */
  fields: Record<string, IFieldInfo>;
}

/**
 * The JSON body of an error answer.
 *
 * Handlers answer `{field, message, errors}` for invalid input, and Jupyter
 * server's `APIHandler` answers `{message, reason}` for other errors.
 */
export interface IErrorBody {
  /**
   * The offending field of the request, if any.
   */
  field?: string | null;

  /**
   * A human-readable explanation.
   */
  message?: string;

  /**
   * The HTTP reason phrase, if the server sent one.
   */
  reason?: string | null;

  /**
   * Every offending field with its message, for invalid job bodies.
   */
  errors?: IFieldError[];

  /**
   * The message's stable code, where the server's own words say it.
   */
  code?: string;

  /**
   * The message's named parameters (a parameter may be a message itself).
   */
  params?: Record<string, unknown>;
}

/**
 * A message of the server: its English text, and where the server's own words
 * say it, a stable code with named parameters (`translateMessage`).
 */
export interface IServerMessage {
  /**
   * The English text (what the CLI prints).
   */
  message: string;

  /**
   * The code of the message's template (`SERVER_MESSAGES`).
   */
  code?: string;

  /**
   * The template's named parameters; a parameter may be a message itself.
   */
  params?: Record<string, unknown>;
}

/**
 * One invalid field of a job body.
 */
export interface IFieldError extends IServerMessage {
  /**
   * The field, e.g. `name`, `env[FOO]` or `pvc[0].mountPath`.
   */
  field: string;
}

/**
 * A PersistentVolumeClaim mounted in every replica.
 */
export interface IPvcMount {
  /**
   * The claim's name.
   */
  claim: string;

  /**
   * Absolute mount path in the containers.
   */
  mountPath: string;

  /**
   * Path inside the volume to mount instead of its root.
   */
  subPath?: string | null;

  /**
   * Whether the mount is read-only.
   */
  readOnly?: boolean;
}

/**
 * A pod toleration.
 */
export interface IToleration {
  /**
   * The taint key; empty with `Exists` tolerates every taint.
   */
  key: string;

  /**
   * `Equal` or `Exists`.
   */
  operator?: string;

  /**
   * The taint value (only with `Equal`).
   */
  value?: string;

  /**
   * `NoSchedule`, `PreferNoSchedule`, `NoExecute` or empty for all.
   */
  effect?: string;

  /**
   * Seconds a `NoExecute` taint is tolerated.
   */
  tolerationSeconds?: number;
}

// BEGIN generated by tools/generate_fields.py: make fields
/**
 * The job body of `POST render` and `POST jobs`.
 *
 * Absent fields take the server's defaults.
 */
export interface IJobBody {
  /**
   * job name (default: derived from the script, plus a random suffix)
   */
  name?: string;

  /**
   * container image of every replica (a TrainJob's default: its runtime's)
   */
  image?: string | null;

  /**
   * the kind of job object: PyTorchJob (Kubeflow Training Operator v1) or TrainJob (Kubeflow Trainer v2), any case
   */
  kind?: string;

  /**
   * the Kubeflow Trainer runtime a TrainJob runs on (default: torch-distributed)
   */
  runtime?: string | null;

  /**
   * a TrainJob's dataset, a URI such as hf://tatsu-lab/alpaca or s3://bucket/path: the runtime's dataset initializer puts it in /workspace/dataset (locally: file:// only, copied)
   */
  dataset?: string | null;

  /**
   * a TrainJob's model, a URI such as hf://meta-llama/Llama-3.2-1B-Instruct: the runtime's model initializer puts it in /workspace/model (locally: file:// only, copied)
   */
  model?: string | null;

  /**
   * a Secret in the job's namespace whose keys the dataset initializer gets as env (credentials, e.g. ACCESS_TOKEN for a private Hugging Face dataset)
   */
  datasetSecret?: string | null;

  /**
   * a Secret in the job's namespace whose keys the model initializer gets as env (credentials, e.g. ACCESS_TOKEN for a gated model)
   */
  modelSecret?: string | null;

  /**
   * the command line, one word per item
   */
  command?: string[];

  /**
   * arguments of the command or of the script
   */
  args?: string[];

  /**
   * ship this Python file inside the job and run it
   */
  script?: string | null;

  /**
   * working directory in the container
   */
  workdir?: string | null;

  /**
   * pods: node 0 is the Master, the rest Workers
   */
  nodes?: number | string;

  /**
   * every node a Worker, no Master (the operator then sets no RANK, WORLD_SIZE, MASTER_ADDR; e.g. elastic jobs)
   */
  master?: boolean;

  /**
   * GPUs per node
   */
  gpus?: number | string;

  /**
   * GPU resource name
   */
  gpuResource?: string;

  /**
   * CPU per node, a quantity such as 4 or 500m
   */
  cpu?: string | null;

  /**
   * memory per node, a quantity such as 16Gi
   */
  memory?: string | null;

  /**
   * size of /dev/shm, e.g. 8Gi; 0 or off for none
   */
  shm?: string | null;

  /**
   * processes per node (torchrun); default GPUs or 1 (a TrainJob's: its runtime's rule, GPUs else CPUs)
   */
  nprocPerNode?: number | string | null;

  /**
   * mount a PersistentVolumeClaim in every replica (repeatable)
   */
  pvc?: IPvcMount[];

  /**
   * env var (repeatable)
   */
  env?: Record<string, string>;

  /**
   * what the operator does when a replica exits
   */
  restartPolicy?: string;

  /**
   * restarts before the job fails
   */
  backoffLimit?: number | string | null;

  /**
   * fail the job after this many seconds
   */
  deadline?: number | string | null;

  /**
   * delete the finished job after this many seconds
   */
  ttl?: number | string | null;

  /**
   * which pods to delete when the job ends
   */
  cleanPodPolicy?: string;

  /**
   * node label every replica needs (repeatable)
   */
  nodeSelector?: Record<string, string>;

  /**
   * tolerate a node taint (repeatable)
   */
  tolerations?: IToleration[];

  /**
   * label of the job and its pods (repeatable)
   */
  labels?: Record<string, string>;

  /**
   * annotation of the job and its pods (repeatable)
   */
  annotations?: Record<string, string>;

  /**
   * Kueue LocalQueue name
   */
  queue?: string | null;

  /**
   * PriorityClass of every pod (preemption; Kueue's workload priority)
   */
  priorityClassName?: string | null;

  /**
   * ServiceAccount every pod runs as (e.g. workload identity to reach S3 or GCS)
   */
  serviceAccount?: string | null;

  /**
   * Secret with the credentials of a private registry (repeatable)
   */
  imagePullSecrets?: string[];

  /**
   * TensorBoard log directory (on a PVC) the job writes to
   */
  logdir?: string | null;

  /**
   * keep each replica's output, line-timestamped, in DIR/.ptjob-logs/<job>/ on a PVC, so its logs outlive its pods; 'off' to keep none (default: the log directory; off without one)
   */
  logArchive?: string | null;

  /**
   * elastic: fewest Worker nodes the job runs with (elasticPolicy.minReplicas)
   */
  minNodes?: number | string | null;

  /**
   * elastic: most Worker nodes (elasticPolicy.maxReplicas)
   */
  maxNodes?: number | string | null;

  /**
   * elastic: times torchrun restarts the worker group before failing (maxRestarts)
   */
  maxRestarts?: number | string | null;

  /**
   * elastic: torchrun's rendezvous backend (c10d when elastic)
   */
  rdzvBackend?: string | null;

  /**
   * parts of a manifest the form does not know
   */
  extras?: Record<string, unknown>;
}
// END generated

/**
 * The answer of `POST render`.
 */
export interface IRenderResult {
  /**
   * The job body with every default spelled out.
   */
  job: IJobBody;

  /**
   * The PyTorchJob manifest.
   */
  manifest: Record<string, unknown>;

  /**
   * The manifest as YAML.
   */
  yaml: string;

  /**
   * For edited YAML: fields the cluster would drop silently (not in its CRD
   * schema), found by a server-side dry run; empty on the local backend.
   */
  warnings?: string[];

  /**
   * The same warnings with their codes (`warningsOf`).
   */
  warningMessages?: IServerMessage[];
}

/**
 * The states of a job.
 */
export type JobState =
  | 'Submitted'
  | 'Created'
  | 'Running'
  | 'Restarting'
  | 'Succeeded'
  | 'Failed'
  | 'Suspended';

/**
 * One entry of the job's `status.conditions`.
 */
export interface ICondition {
  /**
   * Created, Running, Restarting, Succeeded, Failed, Suspended.
   */
  type: string;

  /**
   * `True`, `False` or `Unknown`.
   */
  status: string;

  /**
   * Machine-readable reason.
   */
  reason: string;

  /**
   * Human-readable message.
   */
  message: string;

  /**
   * When the condition changed, in seconds since the epoch.
   */
  lastTransition: number;
}

/**
 * One replica of a job: a pod, or a local process.
 */
export interface IReplica {
  /**
   * `master-0`, `worker-0`, …
   */
  name: string;

  /**
   * Pending, Running, Succeeded, Failed or Unknown.
   */
  phase: string;

  /**
   * Container restarts.
   */
  restarts: number;

  /**
   * Exit code of the last finished container.
   */
  exitCode?: number | null;

  /**
   * Why it is not running, e.g. `Unschedulable` or `ImagePullBackOff`.
   */
  reason?: string | null;

  /**
   * The details of the reason.
   */
  message?: string | null;

  /**
   * The message's code where the words are the server's own, else null.
   */
  messageCode?: string | null;

  /**
   * The message's parameters.
   */
  messageParams?: Record<string, unknown> | null;

  /**
   * The node it runs on.
   */
  node?: string | null;
}

/**
 * A job as `GET jobs` and `GET jobs/{name}` answer it.
 */
export interface IJob {
  /**
   * The job's name.
   */
  name: string;

  /**
   * Its state.
   */
  state: JobState;

  /**
   * The object it is: `PyTorchJob` or `TrainJob`.
   */
  kind?: string;

  /**
   * Its replicas, master first.
   */
  replicas: IReplica[];

  /**
   * Nodes (pods).
   */
  nodes: number;

  /**
   * GPUs per node.
   */
  gpus: number;

  /**
   * Creation time, in seconds since the epoch.
   */
  created: number;

  /**
   * Start time, if started.
   */
  started?: number | null;

  /**
   * Finish time, if finished.
   */
  finished?: number | null;

  /**
   * Seconds from start to finish (or to now).
   */
  duration?: number | null;

  /**
   * Conditions, oldest first.
   */
  conditions?: ICondition[];

  /**
   * The TensorBoard log directory, if any.
   */
  logdir?: string | null;

  /**
   * The Kubernetes namespace, if any.
   */
  namespace?: string | null;

  /**
   * The manifest (`GET jobs/{name}` only).
   */
  manifest?: Record<string, unknown> | null;

  /**
   * The job body that clones this job (`GET jobs/{name}` only).
   */
  spec?: IJobBody;

  /**
   * The manifest as YAML (`GET jobs/{name}` only).
   */
  yaml?: string;

  /**
   * The `ptjob submit` line that gives the job back; null for a job shipped
   * as a script (`GET jobs/{name}` only).
   */
  submitCommand?: string | null;

  /**
   * Why the job is in its state when no condition says so (e.g. no operator
   * has picked it up yet).
   */
  message?: string | null;

  /**
   * The message's code where the words are the server's own, else null.
   */
  messageCode?: string | null;

  /**
   * The message's parameters.
   */
  messageParams?: Record<string, unknown> | null;

  /**
   * What the user should know about a submission (`POST jobs`): fields the
   * cluster dropped because its CRD schema does not declare them.
   */
  warnings?: string[];

  /**
   * The same warnings with their codes (`warningsOf`).
   */
  warningMessages?: IServerMessage[];

  /**
   * How far along it is; null until a source said anything.
   */
  progress?: IJobProgress | null;

  /**
   * Why it failed: null unless it failed (absent from older servers).
   */
  failure?: IJobFailure | null;

  /**
   * What it waits for: null unless something blocks it.
   */
  waiting?: IJobWaiting | null;
}

/**
 * Why a job failed: the replica that failed first and its last output.
 */
export interface IJobFailure {
  /**
   * The replica that failed first, e.g. `master-0`; empty when no replica did
   * (a deadline, a refused manifest).
   */
  replica: string;

  /**
   * Its exit code, if it exited.
   */
  exitCode: number | null;

  /**
   * The signal that ended it, e.g. `SIGKILL`, if one did.
   */
  signal: string | null;

  /**
   * The platform's reason: `Error`, `OOMKilled`, `BackoffLimitExceeded`, …
   */
  reason: string;

  /**
   * One line: the exception, e.g. `ZeroDivisionError: division by zero`.
   */
  message: string;

  /**
   * The last lines of its output (the traceback when there is one).
   */
  tail: string[];

  /**
   * Where the failing run's log is: the current container, the previous one,
   * the log archive, or nowhere any more (null).
   */
  logSource: 'current' | 'previous' | 'archive' | null;

  /**
   * What to do about it, one sentence, if the failure is a known one.
   */
  hint: string | null;

  /**
   * The hint's message code (`translateMessage`).
   */
  hintCode?: string | null;

  /**
   * The hint's message parameters.
   */
  hintParams?: Record<string, unknown> | null;
}

/**
 * What keeps a job (or its replicas) from running.
 */
export interface IJobWaiting {
  /**
   * The platform's reason, e.g. `Unschedulable`, `ImagePullBackOff`.
   */
  reason: string;

  /**
   * Its message, e.g. `0/8 nodes are available: 8 Insufficient nvidia.com/gpu.`
   */
  message: string;

  /**
   * The message's code where the words are the server's own, else null.
   */
  messageCode?: string | null;

  /**
   * The message's parameters.
   */
  messageParams?: Record<string, unknown> | null;

  /**
   * What to do about it, one sentence, if known.
   */
  hint: string | null;

  /**
   * The hint's message code (`translateMessage`).
   */
  hintCode?: string | null;

  /**
   * The hint's message parameters.
   */
  hintParams?: Record<string, unknown> | null;
}

/**
 * Where a job's progress came from, best first.
 */
export type ProgressSource =
  'report' | 'trainerStatus' | 'logs' | 'tensorboard';

/**
 * A job's progress: each field from the best source that has it.
 */
export interface IJobProgress {
  /**
   * 0..100, if known.
   */
  percent: number | null;

  /**
   * Estimated seconds left, if known.
   */
  etaSeconds: number | null;

  /**
   * Current and total step, if known.
   */
  step: number | null;
  totalSteps: number | null;

  /**
   * Current (possibly fractional) and total epoch, if known.
   */
  epoch: number | null;
  totalEpochs: number | null;

  /**
   * The latest value of each metric, under the job's own names.
   */
  metrics: Record<string, number>;

  /**
   * Distinct metric names left out (beyond the first 50, or not a valid name),
   * counted up to 1000.
   */
  droppedMetrics?: number;

  /**
   * The value of each metric read from a log line as the script printed it
   * (`0.0000` for `loss=0.0000`): shown as is. A metric missing here has only
   * its number.
   */
  metricTexts?: Record<string, string>;

  /**
   * The metric to show first: loss, eval_loss, accuracy, else the first reported.
   */
  keyMetric: string | null;

  /**
   * The best source that said anything.
   */
  source: ProgressSource;

  /**
   * When it last changed, in seconds since the epoch.
   */
  updated: number;
}

/**
 * One value of a metric over time.
 */
export interface IMetricPoint {
  time: number;
  step: number | null;
  value: number;
}

/**
 * `GET jobs/{name}/tensorboard`: exactly one of the two is set.
 */
export interface IJobTensorBoard {
  /**
   * The log directory TensorBoard would open, as the server sees it.
   */
  logdir: string | null;

  /**
   * Why TensorBoard cannot open the job's log directory (the server's words).
   */
  problem: string | null;

  /**
   * The problem's message code (`translateCoded`), null for a backend's words.
   */
  problemCode?: string | null;

  /**
   * The problem's message parameters.
   */
  problemParams?: Record<string, unknown> | null;
}

/**
 * `GET jobs/{name}/progress`: the progress and each metric's bounded history.
 */
export interface IJobProgressDetail {
  progress: IJobProgress | null;
  history: Record<string, IMetricPoint[]>;
}

/**
 * Something that happened to a job or one of its replicas.
 */
export interface IJobEvent {
  /**
   * `Normal` or `Warning`.
   */
  type: string;

  /**
   * Machine-readable reason.
   */
  reason: string;

  /**
   * Human-readable message.
   */
  message: string;

  /**
   * The job or replica it is about.
   */
  object: string;

  /**
   * When, in seconds since the epoch.
   */
  time: number;

  /**
   * How many times it happened.
   */
  count: number;
}

/**
 * A Kubeflow Trainer runtime a TrainJob can name (`GET runtimes`).
 */
export interface IRuntime {
  /**
   * The runtime's name (`runtimeRef.name`).
   */
  name: string;

  /**
   * `ClusterTrainingRuntime` or `TrainingRuntime` (this namespace's).
   */
  kind: string;

  /**
   * Its `trainer.kubeflow.org/framework` label (`torch`, `deepspeed`, …).
   */
  framework: string | null;

  /**
   * Whether it is labelled `trainer.kubeflow.org/support: deprecated`.
   */
  deprecated: boolean;

  /**
   * Its default node count (`mlPolicy.numNodes`).
   */
  nodes: number;

  /**
   * The image of its `node` container.
   */
  image: string | null;

  /**
   * Which `mlPolicy` it sets (`torch`, `mpi`, …).
   */
  policy: string | null;

  /**
   * Its replicated jobs (the valid patch targets).
   */
  replicatedJobs: string[];

  /**
   * Its initializer jobs (`dataset-initializer`, `model-initializer`): only
   * then may a job set `dataset` / `model` (show those fields).
   */
  initializers: string[];

  /**
   * Its `node` container's command: what runs when the job gives none (a
   * torchtune runtime's `tune run …`), for the command's placeholder.
   */
  command?: string[];

  /**
   * Why this tool cannot submit to it; `null` when it can.
   */
  unusable: string | null;

  /**
   * Its message code (`translateCoded`).
   */
  unusableCode?: string | null;

  /**
   * Its message parameters.
   */
  unusableParams?: Record<string, unknown> | null;
}

/**
 * A claim a job can mount.
 */
export interface IVolume {
  /**
   * The claim's name.
   */
  name: string;

  /**
   * `Bound`, `Pending`, …
   */
  phase: string;

  /**
   * Capacity, e.g. `10Gi`.
   */
  capacity?: string | null;

  /**
   * Access modes, e.g. `ReadWriteMany`.
   */
  accessModes: string[];

  /**
   * Local backend: the directory the claim maps to.
   */
  localPath?: string | null;
}

/**
 * A message of the logs websocket.
 */
export type LogMessage =
  ILogBatch | ILogChunk | ILogNotice | ILogEnd | ILogError;

/**
 * Several log messages in stream order (what the server sends for log output):
 * each is handled as a message of its own. On the wire a binary message
 * (`decodeBatch` in `logs/stream`).
 */
export interface ILogBatch {
  /**
   * The chunks and notices, never empty.
   */
  chunks: (ILogChunk | ILogNotice)[];
}

/**
 * A message about one replica's log rather than log output (e.g. the pod's
 * node is gone, so its log can no longer be read).
 */
export interface ILogNotice {
  /**
   * The replica, e.g. `worker-1`.
   */
  replica: string;

  /**
   * What happened, for a person.
   */
  text: string;

  /**
   * Always true for a notice.
   */
  notice: true;
}

/**
 * Some complete lines of one replica's log, or of several replicas' merged in
 * time order.
 */
export interface ILogChunk {
  /**
   * The replica, e.g. `master-0`.
   */
  replica: string;

  /**
   * Whole lines, each ending with a newline, at most 16 KiB each. A line
   * starting with `\r` (the only place one occurs) is a redraw: a terminal
   * shows it instead of this replica's previous line.
   */
  text: string;

  /**
   * Where the chunk ends in the replica's log; `since` resumes after it.
   */
  offset: number;

  /**
   * Whether it is the previous container's log.
   */
  previous?: boolean;

  /**
   * A merged chunk (several replicas' lines in time order) only: its
   * replicas. `replica` and `offset` are then its last line's.
   */
  replicas?: string[];

  /**
   * A merged chunk only: each line's replica, one character per line of
   * `text`: character code 48 + i (`"0"`, `"1"`, …) for `replicas[i]`.
   */
  owners?: string;

  /**
   * A merged chunk only: where it ends in each of its replicas' logs.
   */
  offsets?: Record<string, number>;

  /**
   * Each line's time in seconds since the epoch (null for a line without a
   * stamp), when asked for with `timestamps=1`.
   */
  times?: (number | null)[];

  /**
   * Whether each line of `text` still starts with its stamp (absent: false):
   * a timestamp without spaces (e.g. `2026-11-27T14:00:00.123456789Z`) and
   * one space, neither part of the line; a line without a space is a stamp
   * alone (an empty line). A redraw's `\r` follows the stamp's space.
   * `owners`, offsets and the rest are as without stamps. Never with
   * `times`; a notice is never stamped.
   */
  stamped?: boolean;
}

/**
 * The end of a log stream: everything is read and the job is finished.
 */
export interface ILogEnd {
  /**
   * Always true.
   */
  end: true;
}

/**
 * A failed log stream.
 */
export interface ILogError {
  /**
   * What went wrong.
   */
  error: string;

  /**
   * The HTTP status it corresponds to.
   */
  status: number;
}

/**
 * A running TensorBoard, as `GET`/`POST tensorboards` answer it.
 */
export interface ITensorBoard {
  /**
   * Its id.
   */
  id: string;

  /**
   * Its page, relative to the server's base URL, ending with `/`.
   */
  url: string;

  /**
   * The log directory it shows (the server's own path).
   */
  logdir: string;

  /**
   * The jobs it was opened for.
   */
  jobs?: string[];

  /**
   * A TensorBoard opened for jobs (one or several): each run's name (the
   * job's) and its directory; null for one opened on a directory.
   */
  runs?: Record<string, string> | null;

  /**
   * When it started, in seconds since the epoch.
   */
  started?: number;

  /**
   * When its page was last requested, in seconds since the epoch; idle ones
   * are stopped.
   */
  lastAccess?: number;
}

/**
 * One hyperparameter that differs between compared jobs.
 */
export interface IComparedParameter {
  /**
   * The job-body field, with the key for maps: `args`, `env.LR`, `gpus`.
   */
  field: string;

  /**
   * Each job's value, in the order of `jobs` (null: the job has none).
   */
  values: unknown[];
}

/**
 * One metric of compared jobs.
 */
export interface IComparedMetric {
  /**
   * The metric's name, as the jobs report it.
   */
  name: string;

  /**
   * Each job's final or latest value, in the order of `jobs`.
   */
  values: Array<number | null>;

  /**
   * Whether lower is better: the mode a run reported
   * (`report(mode={"acc": "max"})`), else names with `loss` or `error`.
   */
  lowerIsBetter: boolean;

  /**
   * False for a name a run reported as a hyperparameter, or a setting or
   * counter (`lr`, `epoch`...): no value of it is best.
   */
  scored: boolean;

  /**
   * The index of the single best value; null when no job has one, on a tie,
   * or when the metric is not scored.
   */
  best: number | null;
}

/**
 * A reported hyperparameter that differs between compared jobs.
 */
export interface IComparedHparam {
  /**
   * Its name, as the run reported it (nested names joined by dots).
   */
  name: string;

  /**
   * Each run's value, in the order of `jobs` (null: the run has none).
   */
  values: unknown[];
}

/**
 * A checkpoint a run wrote (`GET jobs/{name}/run`).
 */
export interface ICheckpoint {
  /**
   * Where, as the job sees it: what a clone gets as `PTJOB_RESUME_FROM`.
   */
  path: string;

  /**
   * The training step, if known.
   */
  step: number | null;

  /**
   * When it was written (seconds since the epoch), if known.
   */
  time: number | null;

  /**
   * The metrics reported with it.
   */
  metrics: Record<string, number>;

  /**
   * Who said so: the job's `report`, or the files Lightning or Hugging Face
   * wrote.
   */
  source: 'report' | 'lightning' | 'huggingface';
}

/**
 * An output a run named (`report(artifact=PATH, name=...)`).
 */
export interface IArtifact {
  name: string;
  path: string;
  time: number | null;
}

/**
 * `GET jobs/{name}/run`: what the run was.
 */
export interface IRunRecord {
  /**
   * Its hyperparameters by name.
   */
  hparams: Record<string, unknown>;

  /**
   * Each metric's final (or latest) value and its history.
   */
  metrics: {
    final: Record<string, number>;
    history: Record<string, IMetricPoint[]>;
  };

  /**
   * Its checkpoints, oldest first.
   */
  checkpoints: ICheckpoint[];

  /**
   * Its artifacts.
   */
  artifacts: IArtifact[];

  /**
   * Which way a metric is better, as the run said.
   */
  modes: Record<string, 'min' | 'max'>;

  /**
   * Reported items left out (over a limit, or not valid).
   */
  dropped: number;
}

/**
 * A job in a comparison.
 */
export interface IComparedJob {
  /**
   * The job's name.
   */
  name: string;

  /**
   * Its state.
   */
  state: JobState;

  /**
   * Seconds from start to finish (or to now).
   */
  duration?: number | null;

  /**
   * Its TensorBoard log directory, if any.
   */
  logdir?: string | null;
}

/**
 * `GET compare?job=a&job=b`.
 */
export interface IComparison {
  /**
   * The jobs, one column each, in the order asked for.
   */
  jobs: IComparedJob[];

  /**
   * The hyperparameters they reported that differ (shown first).
   */
  hparams: IComparedHparam[];

  /**
   * The fields of their specs that differ between them.
   */
  parameters: IComparedParameter[];

  /**
   * Their metrics, the best value of each marked.
   */
  metrics: IComparedMetric[];
}
