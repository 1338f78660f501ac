"""Every message the server sends about a request, declared once: a stable code and its
English template with named parameters (``{name}``; ``{{``/``}}`` are braces).

A ``Message`` is a code and its parameters; its English text (``str()``) is what the
CLI, the magic and the Python API print. On the wire it is ``{code, params, message}``:
JupyterLab translates the code (``src/servermessages.ts``, generated from ``MESSAGES``
by ``make fields``; the zh_CN catalogue holds each template) and shows ``message`` for a
code it does not know. A parameter may itself be a ``Message`` (a Kubernetes rule's
problem inside a field's sentence); its wire form nests. Parameters carry values, not
words: anything a person reads is a template here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MESSAGES: Mapping[str, str] = {
    # -- a job body, field by field (spec.py) -----------------------------------------
    "json_object": "must be a JSON object",
    "unknown_field": "unknown field; known fields are {known}",
    "logdir_in_shm": "must not be under /dev/shm, which vanishes with the pod",
    "image_reference": "must be a container image reference without spaces",
    "name_required": "is required: a DNS-1035 label such as 'mnist-ddp'",
    "one_of": "must be one of {choices}, got {got}",
    "runtime_name": "must name a training runtime: {problem}",
    "storage_uri": "must be a URI such as hf://org/name or s3://bucket/path (scheme://..., at "
    "most {maximum} characters), got {got}",
    "secret_name": "is the name of a Secret and {problem}",
    "resource_name": "must be an extended resource name such as 'nvidia.com/gpu'",
    "script_text": "must be the Python source text of the training script",
    "priority_class_name": "is the name of a PriorityClass and {problem}",
    "object_name": "must name a Kubernetes object: {problem}",
    "string_type": "must be a string, got {got}",
    "whole_number": "must be a whole number >= {minimum}, got {got}",
    "at_most": "must be at most {maximum}, got {got}",
    "true_or_false": "must be true or false, got {got}",
    "quantity_string": "must be a Kubernetes quantity string, got {got}",
    "queue_name": "is a Kueue LocalQueue name and {problem}",
    "name_length": "must be at most {maximum} characters for {nodes} node(s), got {length}: "
    "the pod and Service '{pod}' must fit in 63 characters",
    "string_list": "must be a list of strings",
    "elastic_needs_workers": "an elastic job needs Workers: give more nodes, or no Master "
    "(--no-master)",
    "min_nodes_above_workers": "must be at most the {workers} Worker(s) the job starts with",
    "max_nodes_below_workers": "must be at least the {workers} Worker(s) the job starts with "
    "and minNodes",
    "log_archive_needs_command": "needs a command or a script: the image's own entrypoint "
    "cannot be wrapped; give a command, or {off}",
    "log_archive_mounts": "must be a directory on a writable PVC of the job (under one of "
    "{mounts}), or {off}; got {got}",
    "log_archive_no_pvc": "must be a directory on a writable PVC of the job (the job mounts no "
    "writable PVC), or {off}; got {got}",
    "command_and_script": "give either a command or a script, not both",
    "script_empty": "is empty",
    "script_nul": "must not contain NUL characters",
    "script_size": "is {size} bytes; a script shipped inside the job may be at most {maximum} "
    "bytes. Put larger code on a PVC and give a command",
    "command_required": "is required: give a command (e.g. python train.py) or a script",
    "command_empty_word": "must not start with an empty word",
    "string_map": "must be an object of string keys and values",
    "map_key": "key {key} {problem}",
    "map_value_string": "value must be a string",
    "map_value": "value {value} {problem}",
    "env_name": "name {key} {problem}",
    "env_reserved": "{key} is set by the Training Operator or by jupyter-pytorchjob in every "
    "replica; choose another name",
    "exec_nul": "must not contain NUL characters (a process cannot receive them)",
    "argument_size": "the argument is {size} bytes; Linux passes at most {maximum} bytes in one "
    "argument or environment string",
    "env_size": "{key}=value is {size} bytes; Linux passes at most {maximum} bytes in one "
    "argument or environment string",
    "pvc_list": "must be a list of {{claim, mountPath, subPath, readOnly}}",
    "pvc_item": "must be an object {{claim, mountPath, subPath, readOnly}}",
    "pvc_claim_required": "is required: the name of a PersistentVolumeClaim",
    "mount_path_required": "is required: an absolute path such as /mnt/data",
    "mount_root": "must not be '/'",
    "mount_shm": "must not be /dev/shm; set its size with shm (--shm) instead",
    "mount_repeated": "{path} is already mounted by pvc[{index}]",
    "must_be_string": "must be a string",
    "must_be_boolean": "must be true or false",
    "unknown_keys": "unknown keys {keys}",
    "tolerations_list": "must be a list of {{key, operator, value, effect}}",
    "toleration_item": "must be an object {{key, operator, value, effect}}",
    "toleration_key": "key {key} must be a label key such as 'gpu'",
    "toleration_value": "value {value} must be a label value",
    "toleration_exists_value": "must be empty when the operator is Exists",
    "toleration_key_required": "is required when the operator is Equal",
    "toleration_effect": "must be one of {choices} (or empty for all), got {got}",
    "toleration_seconds": "is a whole number, allowed only with NoExecute",
    "extras_object": "must be an object (parts of a manifest the form does not know)",
    # -- Kubernetes' naming, quantity and path rules (k8s_rules.py) ----------------------
    "max_length": "must be at most {maximum} characters, got {length}",
    "dns1035_label": "must consist of lower case letters, digits and '-', start with a letter "
    "and end with a letter or digit (a DNS-1035 label, e.g. 'my-job')",
    "dns1123_subdomain": "must consist of lower case letters, digits, '-' and '.', and start "
    "and end with a letter or digit (a DNS-1123 name, e.g. 'data' or 'team-a.home')",
    "prefix_empty": "the prefix before '/' must not be empty",
    "prefix_invalid": "prefix {prefix} {problem}",
    "name_part_empty": "the name part must not be empty",
    "name_part_length": "the name part must be at most {maximum} characters, got {length}",
    "qualified_name": "must be alphanumeric characters, '-', '_' or '.', starting and ending "
    "with an alphanumeric character, with an optional DNS prefix and '/' (e.g. 'team' or "
    "'example.com/team')",
    "label_value": "must be empty or alphanumeric characters, '-', '_' or '.', starting and "
    "ending with an alphanumeric character",
    "env_var_name": "must consist of letters, digits, '_', '-' or '.', and must not start with "
    "a digit (e.g. 'MY_VAR')",
    "quantity_memory": "must be a Kubernetes quantity such as '8Gi' or '512Mi' (a number with an "
    "optional suffix Ki Mi Gi Ti, k M G T or m; no spaces), got {got}",
    "quantity_cpu": "must be a Kubernetes quantity such as '4' or '500m' (a number with an "
    "optional suffix Ki Mi Gi Ti, k M G T or m; no spaces), got {got}",
    "quantity_positive": "{what} must be greater than zero, got {got}",
    "quantity_max": "{what} must be at most 2^63-1 (the largest Kubernetes quantity), got {got}",
    "quantity_min": "{what} must be at least 1n (10^-9, the smallest Kubernetes quantity), got "
    "{got}",
    "quantity_milli": "{got} means {amount} bytes ('m' is milli); did you mean {suggestion}?",
    "absolute_path": "must be an absolute path starting with '/', got {got}",
    "no_dotdot": "must not contain '..', got {got}",
    "path_characters": "must not contain NUL or newline characters",
    "path_length": "must be shorter than {maximum} bytes, the longest path Linux allows",
    "path_part_length": "has a name longer than {maximum} bytes, the longest file name Linux "
    "allows",
    "relative_path": "must be a relative path (no leading '/'), got {got}",
    # -- lists in a sentence ---------------------------------------------------------------
    "either": "{first} or {rest}",
    "list_and": "{first} and {rest}",
    "list_semicolon": "{first}; {rest}",
    # -- what a kind's manifest must be (kinds/) ------------------------------------------
    "required": "is required",
    "choices": "must be one of {choices}",
    "worker_for_elastic": "is required with elasticPolicy",
    "nproc_twice": "must not be set together with spec.nprocPerNode",
    "replica_type": "replica type must be one of {choices}",
    "pod_name_length": "pod and Service name {pod} would exceed {maximum} characters",
    "master_replicas": "must be 1 (written explicitly)",
    "at_least_one": "must be at least 1",
    "no_container": "must have at least one container",
    "container_named": "must include a container named {name}",
    "build_kind": "must be {kind} to build a {kind}",
    "in_extras": "{path}: {problem}",
    "master_or_worker": "needs a Master or a Worker, got {got}",
    "manifest_kind": "must be a {kind} of {version}, got {got}",
    "gpu_limit": "the container's {key} limit must be a whole number, got {got}",
    "cannot_express": "cannot be {value} for a {kind}: {why}",
    "only_trainjob_runtime": "only a TrainJob runs on a training runtime",
    "only_trainjob_dataset": "only a TrainJob's runtime initializes a dataset",
    "only_trainjob_model": "only a TrainJob's runtime initializes a model",
    "only_trainjob_initializers": "only a TrainJob has initializers",
    "trainjob_no_elastic": "a TrainJob has no elasticPolicy in Trainer v2.3",
    "trainjob_no_workdir": "a TrainJob's runtime patches may not set the container's working "
    "directory; use absolute paths or cd in the script",
    "trainjob_no_master": "a TrainJob has no Master: node 0 leads the rendezvous",
    "trainjob_restart_policy": "the runtime restarts a TrainJob's pods in place (JobSet: "
    "OnFailure)",
    "trainjob_backoff_limit": "the runtime's Job counts a TrainJob's restarts (backoffLimit 6)",
    "trainjob_no_ttl": "a TrainJob has no TTL after it finishes",
    "trainjob_keeps_pods": "a TrainJob keeps its pods once finished",
    "trainjob_no_priority_class": "v2.3's runtime patches cannot set a pod's priorityClassName; "
    "with Kueue, use the label kueue.x-k8s.io/priority-class (a WorkloadPriorityClass) instead",
    "cpu_for_sdk": "is required with {resource}: {problem}",
    "tune_run_log_archive": "must be off for a 'tune run' job: the torch runtime completes the "
    "command (recipe, --config, paths) only when it is exactly 'tune run' (torch.go:175 at "
    "v2.3.0)",
    "trainjob_name_length": "may have at most {maximum} characters for a TrainJob of {nodes} "
    "node(s) on this runtime: JobSet names its pods '{pod}', which must fit in 63 characters "
    "(a longer name is admitted but never gets pods)",
    "runtime_lacks_initializer": "runtime {runtime} has no {job} job to fetch it; use a runtime "
    "that has one (GET runtimes: initializers), such as the torchtune ones",
    "sdk_limits": "limits {limits} need a cpu limit (--cpu): the Kubeflow SDK reads a pod's "
    "device from cpu or one of {devices}, {prefix}* and fails to list every job in the "
    "namespace otherwise",
    "pet_env": "{key} is set by the torch runtime for torchrun and may not be set by the job",
    "tune_immutable": "must not set {key}: the torchtune runtime sets it "
    "(TorchTuneImmutableConfigs, torchtune.go:87-101 at v2.3.0)",
    "patch_manager": "must be a domain-prefixed path such as example.com/my-tool, got {got}",
    "runtime_required": "is required (a training runtime)",
    "runtime_policy": "runs {policy} jobs, not torch (torchrun) ones",
    "runtime_no_node": "has no {node} replicated job to train in",
    # -- untrusted JSON and YAML (shape.py, manifest_yaml.py) -------------------------------
    "what_problem": "{what} {problem}",
    "request_body": "the request body",
    "the_body": "the body",
    "the_value": "the value",
    "run_line": "a run line",
    "not_utf8": "is not UTF-8 text: {error}",
    "nested_deep": "is nested more than {maximum} levels deep",
    "not_json": "is not valid JSON: {error}",
    "number_digits": "holds a number this API does not accept (more than {digits} digits)",
    "number_refused": "holds a number this API does not accept ({error})",
    "too_many_values": "holds more than {maximum} values",
    "nested_deep_at": "is nested more than {maximum} levels deep (at {where})",
    "the_top": "the top",
    "key_not_string": "has a key {key} that is not a string (at {where})",
    "key_not_unicode": "has a key that is not Unicode text (at {where})",
    "string_not_unicode": "holds a string that is not Unicode text (a lone surrogate) at {where}",
    "number_not_json": "holds a number JSON cannot carry ({number}) at {where}",
    "value_not_json": "holds a value of type {type} at {where}; only strings, numbers, "
    "true/false, null, lists and objects (quote dates and the like)",
    "must_be_type": "must be {wanted}, got {got}",
    "must_be_type_value": "must be {wanted}, got {got} {value}",
    "not_null": "must not be null",
    "type_str": "a string",
    "type_int": "an integer",
    "type_float": "a number",
    "type_bool": "true or false",
    "type_null": "null",
    "type_dict": "an object",
    "type_list": "a list",
    "yaml_invalid": "is not valid YAML: {error}",
    "yaml_deep": "is nested too deeply",
    "yaml_digits": "holds a number with more than {digits} digits",
    "yaml_no_job": "holds no {kinds} ({found})",
    "no_document": "no document",
    "yaml_jobs": "holds {count} jobs ({jobs}): apply one at a time",
    "yaml_document": "a {what} (document {number})",
    "yaml_document_named": "{kind} {name} (document {number})",
    "yaml_single_job": "must be a single {kinds} object",
    # -- requests (handlers.py, rest.py, compare.py, clone.py) -------------------------------
    "checkpoint_path": "must be a path of 1-{maximum} printable characters",
    "compare_few": "name at least {minimum} jobs: ?job=a&job=b",
    "compare_many": "at most {maximum} jobs in one comparison",
    "compare_repeated": "each job once; {job} is repeated",
    "patch_suspend_only": "a job's only field that can change is suspend: send "
    '{{"suspend": true}} to suspend it or {{"suspend": false}} to resume it',
    "query_flag": "must be 1 or 0 (true or false), got {got}",
    "query_tail": "must be a whole number of lines >= 0, got {got}",
    "query_since": "must be a JSON object {{replica: offset}} of the last messages received",
    "query_offset": "must be the offset (a whole number >= 0) of a log message, got {got}",
    "job_name_invalid": "no job can be named {name}: it {problem}",
    "body_object": "the request body must be a JSON object",
    # -- what a backend refuses (backends/) -------------------------------------------------
    "local_runtime": "the local backend plays the {runtime} runtime only; submit a TrainJob on "
    "{got} with the kubernetes backend",
    "local_nodes_configured": "this machine runs at most {maximum} local nodes "
    "(PyTorchJobApp.local_max_nodes); the job asks for {nodes}",
    "local_nodes": "this machine runs at most {maximum} local nodes ({perCpu} per CPU, {cpus} "
    "CPUs; PyTorchJobApp.local_max_nodes sets another limit); the job asks for {nodes}",
    "local_no_secrets": "the local backend has no Secrets: a file:// copy needs none",
    "local_download": "the local backend downloads nothing: {scheme}:// is fetched by the "
    "runtime's {initializer} in a cluster; give a file:///path here (copied to {path})",
    "file_uri": "must be file:///absolute/path, got {got}",
    "local_missing": "{path} does not exist on this machine",
    "no_runtime": "no training runtime {name} in namespace {namespace} or the cluster; GET "
    "runtimes (the form's picker) lists them",
    "runtime_unusable": "runtime {name} {problem}",
    "job_not_found": "job {name} not found",
    "job_exists": "a job named {name} already exists; choose another name or delete it first",
    "finished_suspended": "job {name} is {state}: a finished job cannot be suspended; clone it "
    "to run it again",
    "finished_resumed": "job {name} is {state}: a finished job cannot be resumed; clone it to "
    "run it again",
    "no_command": "the job has no command to run",
    "local_gpus": "the job asks for {gpus} GPU(s) on each of {nodes} node(s) but this machine "
    "has {have}; lower gpus (0 runs on the CPU with gloo)",
    "local_workdir": "workdir {workdir} is {path} on this machine, which is not a directory",
    "supervisor_failed": "the job supervisor failed to start",
    "no_logdir": "job {name} has no TensorBoard log directory; submit it with --logdir (the "
    "form's TensorBoard log directory) on a PVC",
    "no_logdir_cluster": "job {name} has no TensorBoard log directory; submit it with --logdir "
    "on a PVC",
    "logdir_no_notebook": "job {name} writes to {logdir} in its pods, but this server does not "
    "run in a notebook pod that could mount the same PVC; open TensorBoard on a directory "
    "instead",
    "logdir_unmounted": "job {name} writes its logs to {logdir} (on PVC {claim}), which this "
    "notebook does not mount; add that PVC to the notebook's volumes, or give the job a "
    "logdir on a PVC the notebook mounts",
    "logdir_off_pvc": "job {name} writes its logs to {logdir} (outside every PVC of the job), "
    "which this notebook does not mount; add that PVC to the notebook's volumes, or give the "
    "job a logdir on a PVC the notebook mounts",
    "no_replica": "job {name} has no replica {replica}; it has {has}",
    "clone_no_manifest": "job {name} has no manifest to clone",
    "clone_unreadable": "job {name} cannot be read back into a job body: {problem}",
    "no_namespaces": "the {backend} backend has no namespaces; leave the namespace out",
    "namespace_not_allowed": "namespace {namespace} is not allowed here; this server works in "
    "{allowed}",
    # -- why a job failed, what it waits for (failure.py): the hints name the flag ----------
    "hint_oom": "The replica ran out of memory: raise {memory} (or lower the batch size or the "
    "DataLoader's num_workers).",
    "hint_cuda_oom": "The GPU ran out of memory: lower the batch size, or spread the model over "
    "more GPUs ({gpus}, {nodes}).",
    "hint_shm": "Shared memory (/dev/shm) ran out: raise {shm} (to 8Gi, say) or lower the "
    "DataLoader's num_workers.",
    "hint_peer_failed": "A collective or the rendezvous timed out because {replica} failed: see "
    "that replica's log first (a slow start: raise {deadline} or the timeout).",
    "hint_peer_late": "A collective or the rendezvous timed out because another replica failed "
    "or is late: see that replica's log first (a slow start: raise {deadline} or the timeout).",
    "hint_evicted": "The node evicted the pod under resource pressure: set {memory} (requests = "
    "limits) so it is not the first to go.",
    "hint_deadline": "The job ran past its deadline: raise {deadline} (or remove it).",
    "hint_backoff": "It failed on every restart up to {backoffLimit}: fix the error in the first "
    "failure's log (raise the limit only for a flaky failure).",
    "hint_sigkill": "The replica was killed (SIGKILL: often out of memory): raise {memory} or "
    "look for what stopped it in the job's events.",
    "hint_image_named": "The image {image} cannot be pulled: check {flag}; a private registry "
    "needs an imagePullSecret in the job's YAML.",
    "hint_image": "The image cannot be pulled: check {flag}; a private registry needs an "
    "imagePullSecret in the job's YAML.",
    "hint_create_pvc": "Create the PVC {name} first, or change {pvc}.",
    "hint_create_object": "Create the {kind} {name} in the job's namespace, or remove it from "
    "{env} / the job's YAML.",
    "hint_no_gpus": "No node has the GPUs asked for free: lower {gpus} or wait.",
    "hint_no_room": "No node has room: lower {cpu} / {memory} or wait.",
    "hint_no_match": "No node matches: check {nodeSelector} and {tolerations}.",
    "hint_pvc_unbound": "The job's PVC is not bound: check {pvc}.",
    "hint_quota": "The queue's quota is used up: lower {gpus} or wait for admission.",
    "hint_resume": "Resume it: ptjob resume <name>.",
    "hint_name_too_long": "Shorten the job's name ({name}): the names made from it must fit in "
    "63 characters.",
    "hint_webhook": "The cluster's admission webhook refused it: change the field its message "
    "names.",
    "waiting_suspended": "the job is suspended: its pods are created when it is resumed",
    "waiting_no_workload": "queued in LocalQueue {queue}, but Kueue has made no Workload for it "
    "yet",
    "waiting_admission": "waiting for Kueue to admit it from LocalQueue {queue}",
    "waiting_for_peers_one": "{nodes} restarted and waits for its peers, which have all "
    "exited ({peers}): the job cannot complete; delete it",
    "waiting_for_peers": "{nodes} restarted and wait for their peers, which have all exited "
    "({peers}): the job cannot complete; delete it",
    "hint_waiting_for_peers": "Its peers are not restarted (they ended), so nothing will join "
    "it: delete the job and submit it again; a script should leave through a barrier and "
    "destroy_process_group (see examples/train_ddp.py).",
    # -- what the user should know about a job as it stands (warnings) -------------------
    "warn_restart_always": "restart policy Always restarts a node even after it exits 0: the "
    "Master never succeeds, and the job ends Failed once the restarts reach the backoff "
    "limit (the Training Operator does this in a cluster, the local backend likewise); use "
    "OnFailure to restart only failed nodes",
    "warn_cannot_check": "could not check which fields the cluster keeps: {error}",
    "warn_dropped_fields": "the API server dropped {count} field(s) its {kind} schema does not "
    "declare, so they have no effect: {paths}. Check their spelling and where they are "
    "placed in the manifest",
    "warn_no_local_effect": "{fields} has no effect on the local backend, which runs "
    "processes, not pods; a cluster uses it",
    "yaml_left_alone": "{document} left alone: Apply YAML applies only the job",
    # -- what a job and its replicas are doing, where the platform says nothing ---------------
    "replica_cleaned_up": "the operator deleted the pod when the job finished (cleanPodPolicy "
    "{policy})",
    "replica_deleted": "the pod was deleted after the job finished",
    "replica_suspended": "the job is suspended: its pods are created again when it resumes",
    "replica_deadline_deleted": "the JobSet and its pods were deleted when the deadline passed",
    "replica_waits_for_master": "init-pytorch is waiting for the master to be reachable",
    "replica_last_run": "last run: {reason} with code {exitCode}",
    "replica_said": "{replica}: {said}",
    "replica_exited": "exited with code {exitCode}",
    "replica_cannot_start": "cannot start {replica}: {error}",
    "no_operator": "no operator has picked this job up in {seconds} s: the Kubeflow Training "
    "Operator (deployment training-operator, usually in namespace kubeflow) may be down or "
    "not installed; the job starts when it reconciles",
    "no_controller": "no pods and no status after {seconds} s: the Kubeflow Trainer controller "
    "may be down, or it could not create the job's JobSet - its events say why (e.g. "
    "TrainJobResourcesCreationFailed)",
    # -- TensorBoard (tensorboard/) --------------------------------------------------------
    "tb_name_logdir": "name a log directory",
    "tb_nul": "the log directory contains a NUL character",
    "tb_dotdot": "'..' is not allowed in a log directory",
    "tb_lookup": "cannot look up {path}: {reason}",
    "tb_outside_roots": "{path} resolves to {resolved}, outside the TensorBoard roots ({roots})",
    "tb_not_dir": "{path} is not a directory",
    "tb_missing": "{path} does not exist",
    "tb_shutting_down": "the server is shutting down",
    "tb_no_jobs": "name at least one job",
    "tb_run_name": "{name} cannot name a TensorBoard run",
    "tb_run_problem": "{name}: {problem}",
    "tb_run_comma": "{name}: TensorBoard cannot name a run in {path} (a comma)",
    "tb_shared_logdir": "{first} and {second} share the log directory {path}",
    "tb_starting": "{count} TensorBoards are starting, the most this server runs at once; try "
    "again in a moment",
    "tb_running": "{count} TensorBoards are running, the most this server allows "
    "(c.PyTorchJobApp.tensorboard_max_instances), and each was used within the last "
    "{seconds} s. Stop one first, e.g. {id} on {logdir} (last used {lastUsed})",
    "tb_cannot_run": "cannot run TensorBoard: {error}",
    "tb_exited": "TensorBoard exited with status {status}: {output}",
    "tb_no_answer": "TensorBoard did not answer within {seconds} s: {output}",
    "tb_no_resolver": "this server cannot find a job's log directory; open TensorBoard by 'logdir'",
    "tb_job_logdir": "no log directory for job {job}: {problem}",
    "tb_jobs_alone": "give 'jobs' alone, or 'logdir' or 'job'",
    "tb_jobs_list": "give a non-empty list of job names",
    "tb_jobs_many": "at most {maximum} jobs in one TensorBoard",
    "tb_jobs_once": "each job once",
    "tb_unknown_field": "unknown field; give 'logdir' or 'job'",
    "tb_one_of": "give exactly one of 'logdir' and 'job'",
    "tb_logdir_string": "the log directory must be a non-empty string",
    "tb_job_string": "the job name must be a non-empty string",
    "tb_not_found": "no TensorBoard {id}",
    # -- a cluster's refusals, our guidance around its words (backends/kubernetes/) --------
    "k8s_no_kubeconfig": "no Kubernetes configuration: not in a pod, and the kubeconfig {path} "
    "does not exist. Set KUBECONFIG to a kubeconfig file, or use the local backend",
    "k8s_bad_kubeconfig": "no Kubernetes configuration: not in a pod, and the kubeconfig {path} "
    "cannot be used ({error}). Set KUBECONFIG, or use the local backend",
    "k8s_unauthorized": "the Kubernetes API refused our credentials (401 Unauthorized) while "
    "trying to {what}; the token may have expired - log in again or refresh the kubeconfig",
    "k8s_refused_change": "the cluster refused to {what}: {message}",
    "k8s_refused_job": "the cluster refused the job: {message}",
    "k8s_forbidden_cluster": "not allowed to {what} (cluster-scoped objects, outside any "
    "namespace): {message}. Only a ClusterRoleBinding grants that - a namespace's roles "
    "cannot; ask an administrator",
    "k8s_forbidden": "not allowed to {what} in namespace {namespace}: {message}. Ask an "
    "administrator for the missing permission (the Kubeflow 'kubeflow-edit' role covers "
    "pytorchjobs, pods/log and events)",
    "k8s_no_namespace": "namespace {namespace} does not exist in this cluster ({message}); "
    "check the namespace setting or the kubeconfig context",
    "k8s_rejected": "the API server rejected the job: {message}",
    "k8s_unavailable": "the Kubernetes API is unavailable or overloaded (HTTP {status}: "
    "{message}) while trying to {what}; try again in a moment",
    "k8s_failed": "could not {what}: {message} (HTTP {status})",
    "k8s_timeout": "the Kubernetes API server at {server} did not answer within {seconds} s "
    "while trying to {what}; it may be overloaded or unreachable behind a proxy - try again, "
    "or raise PyTorchJobApp.kubernetes_connect_timeout / kubernetes_request_timeout",
    "k8s_unreachable": "cannot reach the Kubernetes API server at {server} to {what}: {error}. "
    "Check the network or the cluster address in the kubeconfig",
    "k8s_error": "could not {what}: {error}",
}

# A placeholder: ``{name}``, not a doubled brace.
_PLACEHOLDER = re.compile(r"(?<!\{)\{(\w+)\}(?!\})")


def placeholders(template: str) -> set[str]:
    """The parameter names a template uses."""
    return set(_PLACEHOLDER.findall(template.replace("{{", "").replace("}}", "")))


@dataclass(frozen=True)
class Message:
    """One message: a code of ``MESSAGES`` and the parameters its template names."""

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        template = MESSAGES.get(self.code)
        if template is None:
            raise ValueError(f"no message has the code {self.code!r}")
        if placeholders(template) != set(self.params):
            raise ValueError(
                f"message {self.code!r} takes {sorted(placeholders(template))}, "
                f"got {sorted(self.params)}"
            )
        for name, value in self.params.items():
            if not isinstance(value, str | int | float | Message):
                raise TypeError(f"message {self.code!r}: {name} is a {type(value).__name__}")

    def __str__(self) -> str:
        return MESSAGES[self.code].format_map({k: str(v) for k, v in self.params.items()})

    def to_wire(self) -> dict[str, Any]:
        """``{code, params, message}``; a nested message's parameter as its own wire."""
        params = {k: v.to_wire() if isinstance(v, Message) else v for k, v in self.params.items()}
        return {"code": self.code, "params": params, "message": str(self)}


def msg(code: str, **params: Any) -> Message:
    """``Message(code, params)``: ``msg("at_most", maximum=5, got=7)``."""
    return Message(code, params)


def coded_wire(key: str, value: str | Message | None) -> dict[str, Any]:
    """``value`` under ``key`` in English, with ``<key>Code`` and ``<key>Params`` where it
    is a Message (null where the words are the platform's, e.g. the kubelet's)."""
    wire = value.to_wire() if isinstance(value, Message) else None
    return {
        key: wire["message"] if wire else value,
        f"{key}Code": wire["code"] if wire else None,
        f"{key}Params": wire["params"] if wire else None,
    }


def coded_from_wire(data: Mapping[str, Any], key: str) -> Message | None:
    """What ``coded_wire`` wrote under ``key``, read back (a stored record): None unless
    its code and parameters are one of ours (written by another version, or by
    someone else)."""
    code, params = data.get(f"{key}Code"), data.get(f"{key}Params")
    if not isinstance(code, str) or not isinstance(params, Mapping):
        return None
    try:
        return Message(code, _params_from_wire(params))
    except (ValueError, TypeError):
        return None


def _params_from_wire(params: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: Message(value["code"], _params_from_wire(value.get("params") or {}))
        if isinstance(value, Mapping) and isinstance(value.get("code"), str)
        else value
        for key, value in params.items()
    }


def warnings_wire(warnings: list[Message]) -> dict[str, Any]:
    """``warnings`` (English, as before) and ``warningMessages`` (with their codes)."""
    return {
        "warnings": [str(w) for w in warnings],
        "warningMessages": [w.to_wire() for w in warnings],
    }


def joined(code: str, *items: str | Message) -> str | Message:
    """``items`` in one phrase by ``code`` (``list_and``: "a and b and c"); "" for none."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return msg(code, first=items[0], rest=joined(code, *items[1:]))


def either(*items: str | Message) -> str | Message:
    """ "a or b or c"."""
    return joined("either", *items)
