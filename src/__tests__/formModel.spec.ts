/**
 * Tests of the job form model: validation, YAML read-back, submission.
 */

import { FormClient, JobFormModel } from '../form/model';
import { PyTorchJobAPIError } from '../request';
import { IJobBody, IRenderResult, IRuntime } from '../tokens';
import { IFieldInfo } from '../tokens';
import FIELDS_JSON from './fields.json';
import KINDS from './kinds.json';

// The server's `fields`, as `GET config` types them.
const FIELDS = FIELDS_JSON as Record<string, IFieldInfo>;

const defaults = {
  image: 'img',
  shm: '2Gi',
  gpuResource: 'nvidia.com/gpu',
  fields: FIELDS
};

function invalid(errors: Array<[string, string]>): PyTorchJobAPIError {
  return new PyTorchJobAPIError(
    400,
    errors[0][1],
    errors[0][0],
    errors.map(([field, message]) => ({ field, message }))
  );
}

function rendered(job: IJobBody, yaml = 'kind: PyTorchJob\n'): IRenderResult {
  return { job, manifest: {}, yaml };
}

function fakeClient(): jest.Mocked<FormClient> {
  return {
    render: jest.fn(),
    renderYaml: jest.fn(),
    submit: jest.fn(),
    volumes: jest.fn().mockResolvedValue([]),
    runtimes: jest.fn().mockResolvedValue([])
  } as unknown as jest.Mocked<FormClient>;
}

function runtime(patch: Partial<IRuntime>): IRuntime {
  return {
    name: 'torch-distributed',
    kind: 'ClusterTrainingRuntime',
    framework: 'torch',
    deprecated: false,
    nodes: 1,
    image: 'pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime',
    policy: 'torch',
    replicatedJobs: ['node'],
    initializers: [],
    unusable: null,
    ...patch
  };
}

describe('JobFormModel', () => {
  it('suggests a name from the script it runs', () => {
    const model = new JobFormModel({
      client: fakeClient(),
      defaults,
      initial: { command: ['python', 'train_ddp.py'], workdir: '/w' }
    });
    expect(model.state.name).toMatch(/^train-ddp-[a-z0-9]{5}$/);
    expect(model.state.command).toBe('python train_ddp.py');
    expect(model.state.workdir).toBe('/w');
    model.dispose();
  });

  it("shows the server's messages for touched fields only, until a submission", async () => {
    const client = fakeClient();
    client.render.mockRejectedValue(
      invalid([
        ['name', 'must be a DNS-1035 label'],
        ['command', 'is required']
      ])
    );
    const model = new JobFormModel({ client, defaults });
    model.set({ name: 'Bad_Name' });
    expect(await model.validate()).toBe(false);
    expect(client.render).toHaveBeenLastCalledWith(
      expect.objectContaining({ name: 'Bad_Name' })
    );
    expect(model.errors.size).toBe(2);
    expect([...model.visibleErrors.keys()]).toEqual(['name']);
    expect(model.sectionsWithErrors).toEqual(new Set(['basics']));

    client.submit.mockRejectedValue(invalid([['command', 'is required']]));
    expect(await model.submit()).toBeNull();
    expect([...model.visibleErrors.keys()]).toEqual(['command']);
    model.dispose();
  });

  it('says nothing of an empty script before it is typed or submitted', async () => {
    const client = fakeClient();
    client.render.mockRejectedValue(invalid([['script', 'is empty']]));
    const model = new JobFormModel({ client, defaults });
    model.set({ mode: 'script' });
    expect(await model.validate()).toBe(false);
    expect(model.visibleErrors.size).toBe(0);
    model.set({ script: ' ' });
    expect(await model.validate()).toBe(false);
    expect([...model.visibleErrors.keys()]).toEqual(['script']);
    model.dispose();
  });

  it('clears the errors and keeps the YAML once valid', async () => {
    const client = fakeClient();
    client.render.mockResolvedValue(rendered({ name: 'ok' }, 'yaml text'));
    const model = new JobFormModel({ client, defaults });
    expect(await model.validate()).toBe(true);
    expect(model.errors.size).toBe(0);
    expect(model.yaml).toBe('yaml text');
    expect(model.yamlDraft).toBe('yaml text');
    expect(model.yamlEdited).toBe(false);
    model.dispose();
  });

  it('drops the answer of a validation overtaken by another', async () => {
    const client = fakeClient();
    let resolveFirst: (value: IRenderResult) => void = () => undefined;
    client.render
      .mockImplementationOnce(
        () => new Promise(resolve => (resolveFirst = resolve))
      )
      .mockResolvedValueOnce(rendered({}, 'second'));
    const model = new JobFormModel({ client, defaults });
    const first = model.validate();
    await model.validate();
    resolveFirst(rendered({}, 'first'));
    await first;
    expect(model.yaml).toBe('second');
    model.dispose();
  });

  it('debounces validation while typing', async () => {
    jest.useFakeTimers();
    const client = fakeClient();
    client.render.mockResolvedValue(rendered({}));
    const model = new JobFormModel({ client, defaults, debounce: 300 });
    model.set({ name: 'a' });
    model.set({ name: 'ab' });
    model.set({ name: 'abc' });
    jest.advanceTimersByTime(299);
    expect(client.render).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(client.render).toHaveBeenCalledTimes(1);
    expect(client.render).toHaveBeenLastCalledWith(
      expect.objectContaining({ name: 'abc' })
    );
    jest.useRealTimers();
    model.dispose();
  });

  it('reads edited YAML back into the form, keeping unknown fields', async () => {
    const client = fakeClient();
    client.renderYaml.mockResolvedValue(
      rendered(
        {
          name: 'from-yaml',
          command: ['python', 'x.py'],
          nodes: 4,
          backoffLimit: 5,
          extras: { spec: { runPolicy: { suspend: true } } }
        },
        'canonical'
      )
    );
    const model = new JobFormModel({ client, defaults });
    model.setYamlDraft('edited');
    expect(model.yamlEdited).toBe(true);
    expect(await model.applyYaml()).toBe(true);
    expect(client.renderYaml).toHaveBeenCalledWith('edited');
    expect(model.state.name).toBe('from-yaml');
    expect(model.state.nodes).toBe('4');
    expect(model.state.backoffLimit).toBe('5');
    expect(model.yamlDraft).toBe('canonical');
    expect(model.body.extras).toEqual({
      spec: { runPolicy: { suspend: true } }
    });
    model.dispose();
  });

  it('shows the fields the cluster would drop from applied YAML', async () => {
    const client = fakeClient();
    const result = rendered(
      { name: 'typo', command: ['python', 'x.py'] },
      'canonical'
    );
    client.renderYaml.mockResolvedValue({
      ...result,
      warnings: [
        'the API server dropped 1 field(s): spec.runPolicy.backofLimit'
      ]
    });
    const model = new JobFormModel({ client, defaults });
    expect(model.yamlWarnings).toEqual([]);
    model.setYamlDraft('edited');
    expect(await model.applyYaml()).toBe(true);
    expect(model.yamlWarnings).toEqual([
      'the API server dropped 1 field(s): spec.runPolicy.backofLimit'
    ]);
    model.dispose();
  });

  it("shows the server's warnings about the job as it stands", async () => {
    const client = fakeClient();
    const always =
      'restart policy Always restarts a node even after it exits 0';
    client.render.mockResolvedValue({
      ...rendered({ name: 'a', command: ['python'] }),
      warnings: [always]
    });
    const model = new JobFormModel({ client, defaults });
    expect(model.warnings).toEqual([]);
    expect(await model.validate()).toBe(true);
    expect(model.warnings).toEqual([always]);
    client.render.mockResolvedValue(
      rendered({ name: 'a', command: ['python'] })
    );
    expect(await model.validate()).toBe(true);
    expect(model.warnings).toEqual([]);
    model.dispose();
  });

  it('reports invalid YAML without touching the form', async () => {
    const client = fakeClient();
    client.renderYaml.mockRejectedValue(
      invalid([['spec.pytorchReplicaSpecs', 'a Master is required']])
    );
    const model = new JobFormModel({ client, defaults });
    const before = model.state;
    model.setYamlDraft('kind: PyTorchJob');
    expect(await model.applyYaml()).toBe(false);
    expect(model.yamlError).toBe(
      'spec.pytorchReplicaSpecs: a Master is required'
    );
    expect(model.state).toBe(before);
    model.resetYaml();
    expect(model.yamlError).toBe('');
    model.dispose();
  });

  it('submits and answers the job', async () => {
    const client = fakeClient();
    client.submit.mockResolvedValue({
      name: 'ok',
      state: 'Created',
      replicas: [],
      nodes: 1,
      gpus: 0,
      created: 0
    });
    const model = new JobFormModel({ client, defaults });
    model.set({ name: 'ok', command: 'python t.py' });
    const job = await model.submit();
    expect(job?.name).toBe('ok');
    expect(client.submit).toHaveBeenCalledWith(
      expect.objectContaining({ name: 'ok', command: ['python', 't.py'] })
    );
    expect(model.submitting).toBe(false);
    model.dispose();
  });

  it('puts a taken name under the name field', async () => {
    const client = fakeClient();
    client.submit.mockRejectedValue(
      new PyTorchJobAPIError(409, "a job named 'ok' already exists")
    );
    const model = new JobFormModel({ client, defaults });
    expect(await model.submit()).toBeNull();
    expect(model.visibleErrors.get('name')).toEqual([
      "a job named 'ok' already exists"
    ]);
    model.dispose();
  });

  it('shows other failures as a general error', async () => {
    const client = fakeClient();
    client.submit.mockRejectedValue(new PyTorchJobAPIError(0, 'offline'));
    const model = new JobFormModel({ client, defaults });
    await model.submit();
    expect(model.generalError).toBe('offline');
    model.dispose();
  });

  it('loads the volumes, and survives without them', async () => {
    const client = fakeClient();
    client.volumes.mockResolvedValueOnce([
      { name: 'data', phase: 'Bound', capacity: '10Gi', accessModes: ['RWX'] }
    ]);
    const model = new JobFormModel({ client, defaults });
    await model.loadVolumes();
    expect(model.volumes.map(v => v.name)).toEqual(['data']);
    client.volumes.mockRejectedValueOnce(new Error('forbidden'));
    await model.loadVolumes();
    expect(model.volumes.map(v => v.name)).toEqual(['data']);
    model.dispose();
  });
});

describe('JobFormModel with job kinds', () => {
  it('lists the runtimes only where a kind names one', async () => {
    const client = fakeClient();
    const pytorchOnly = new JobFormModel({
      client,
      defaults: { ...defaults, kinds: [KINDS[0]] }
    });
    await pytorchOnly.loadRuntimes();
    expect(client.runtimes).not.toHaveBeenCalled();
    pytorchOnly.dispose();

    client.runtimes.mockResolvedValue([runtime({})]);
    const model = new JobFormModel({
      client,
      defaults: { ...defaults, kinds: KINDS }
    });
    await model.loadRuntimes();
    expect(model.runtimes.map(r => r.name)).toEqual(['torch-distributed']);
    expect(model.runtimesError).toBe('');
    model.dispose();
  });

  it('says why the runtimes could not be listed', async () => {
    const client = fakeClient();
    client.runtimes.mockRejectedValue(new Error('forbidden'));
    const model = new JobFormModel({
      client,
      defaults: { ...defaults, kinds: KINDS }
    });
    await model.loadRuntimes();
    expect(model.runtimes).toEqual([]);
    expect(model.runtimesError).toBe('forbidden');
    model.dispose();
  });

  it("takes a picked runtime's node count, leaving the image to it", async () => {
    const client = fakeClient();
    client.runtimes.mockResolvedValue([
      runtime({ name: 'torch-big', nodes: 4, image: 'big:1' }),
      runtime({ name: 'no-image', nodes: 2, image: null })
    ]);
    const model = new JobFormModel({
      client,
      defaults: { ...defaults, kinds: KINDS },
      debounce: 3600 * 1000
    });
    await model.loadRuntimes();
    expect(model.state.image).toBe('img');
    // Our default image would pin it over the runtime's: a TrainJob sends none.
    model.set({ kind: 'TrainJob', ttl: '30' });
    expect(model.state.image).toBe('');
    model.pickRuntime('torch-big');
    expect(model.state).toMatchObject({
      runtime: 'torch-big',
      image: '',
      nodes: '4'
    });
    expect(model.body).not.toHaveProperty('image');
    // An image the user gives stays through another pick.
    model.set({ image: 'mine:2' });
    model.pickRuntime('no-image');
    expect(model.state).toMatchObject({ image: 'mine:2', nodes: '2' });
    // The TrainJob's body: kind and runtime, no field it cannot express.
    expect(model.body).toMatchObject({
      kind: 'TrainJob',
      runtime: 'no-image',
      image: 'mine:2',
      nodes: 2
    });
    expect(model.body).not.toHaveProperty('ttl');
    client.render.mockResolvedValue(rendered({ name: 'x' }));
    await model.validate();
    expect(client.render).toHaveBeenLastCalledWith(
      expect.objectContaining({ kind: 'TrainJob', runtime: 'no-image' })
    );
    model.dispose();
  });
});
