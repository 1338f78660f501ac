/**
 * Tests of the form state and its conversion to and from the job body.
 */

import { nullTranslator } from '@jupyterlab/translation';

import { bodyForFile, formDefaults } from '../form/defaults';
import { DEFAULT_SETTINGS } from '../settings';
import {
  bodyToState,
  defaultFormState,
  errorsByField,
  errorsUnder,
  IFormState,
  isShown,
  joinWords,
  kindFields,
  sectionOf,
  splitWords,
  sectionShown,
  stateToBody,
  suggestName,
  usesDataLoaderWorkers
} from '../form/state';
import { IConfig, IJobBody } from '../tokens';
import { IFieldInfo } from '../tokens';
import FIELDS_JSON from './fields.json';
import KINDS from './kinds.json';

// The server's `fields`, as `GET config` types them.
const FIELDS = FIELDS_JSON as Record<string, IFieldInfo>;

const defaults = {
  image: 'pytorch/pytorch:latest',
  shm: '2Gi',
  gpuResource: 'nvidia.com/gpu',
  fields: FIELDS
};

function form(patch: Partial<IFormState> = {}): IFormState {
  return { ...defaultFormState(defaults), name: 'demo', ...patch };
}

describe('splitWords / joinWords', () => {
  it.each([
    ['python train.py --epochs 3', ['python', 'train.py', '--epochs', '3']],
    ['  spaced   out  ', ['spaced', 'out']],
    [`python -c 'print("hi there")'`, ['python', '-c', 'print("hi there")']],
    ['a "b c" d', ['a', 'b c', 'd']],
    ['a\\ b', ['a b']],
    ['x ""', ['x', '']],
    ['"say \\"hi\\""', ['say "hi"']],
    ['', []]
  ])('splits %p', (line, words) => {
    expect(splitWords(line)).toEqual(words);
  });

  it.each([
    [['python', 'train.py']],
    [['python', '-c', "print('it''s')"]],
    [['a b', '', 'c"d', "e'f", '$HOME']],
    [['--lr=0.1', '/data/x.txt', 'key=value,other:1']]
  ])('joins %p so that it splits back the same', words => {
    expect(splitWords(joinWords(words))).toEqual(words);
  });

  it('leaves plain words unquoted', () => {
    expect(joinWords(['python', 'train.py', '--lr=0.1'])).toBe(
      'python train.py --lr=0.1'
    );
  });
});

describe('a field declared only in the table', () => {
  // A field the form has no code for: the loops keep it by its codec.
  const fields: Record<string, IFieldInfo> = {
    ...FIELDS,
    pullFrom: {
      section: 'advanced',
      default: null,
      nullable: true,
      form: 'list'
    },
    retries: {
      section: 'advanced',
      default: 2,
      nullable: false,
      form: 'number'
    },
    extraMap: {
      section: 'advanced',
      default: null,
      nullable: false,
      form: 'map'
    }
  };
  const fresh = (): IFormState => ({
    ...defaultFormState({ ...defaults, fields }),
    name: 'demo',
    command: 'python x.py'
  });

  it('starts as the table says: unset, the default, no rows', () => {
    const state = fresh();
    expect(state.pullFrom).toBe('');
    expect(state.retries).toBe('2');
    expect(state.extraMap).toEqual([]);
  });

  it('goes to the body by its codec and comes back', () => {
    const state: IFormState = {
      ...fresh(),
      pullFrom: ' a, b  c ',
      retries: '5',
      extraMap: [{ key: 'k', value: 'v' }]
    };
    const body = stateToBody(state, fields) as Record<string, unknown>;
    expect(body.pullFrom).toEqual(['a', 'b', 'c']);
    expect(body.retries).toBe(5);
    expect(body.extraMap).toEqual({ k: 'v' });
    const back = bodyToState(body, fresh(), fields);
    expect(back.pullFrom).toBe('a b c');
    expect(back.retries).toBe('5');
    expect(back.extraMap).toEqual([{ key: 'k', value: 'v' }]);
    expect(stateToBody(fresh(), fields)).not.toHaveProperty('pullFrom');
  });
});

describe('stateToBody', () => {
  it('sends only what is set, leaving the rest to the server', () => {
    expect(stateToBody(form({ command: 'python train.py' }), FIELDS)).toEqual({
      name: 'demo',
      image: 'pytorch/pytorch:latest',
      command: ['python', 'train.py'],
      nodes: 1,
      gpus: 0,
      gpuResource: 'nvidia.com/gpu',
      shm: '2Gi',
      restartPolicy: 'OnFailure',
      cleanPodPolicy: 'None'
    });
  });

  it('sends every field of the job body', () => {
    const body = stateToBody(
      form({
        mode: 'script',
        script: 'print(1)\n',
        args: '--epochs 2',
        workdir: '/work',
        nodes: '3',
        gpus: '2',
        cpu: '4',
        memory: '16Gi',
        shm: '8Gi',
        nprocPerNode: '2',
        pvc: [
          {
            claim: 'data',
            mountPath: '/mnt/data',
            subPath: 'x',
            readOnly: true
          },
          { claim: '', mountPath: '', subPath: '', readOnly: false }
        ],
        env: [
          { key: 'A', value: '1' },
          { key: ' ', value: 'ignored' }
        ],
        restartPolicy: 'Never',
        backoffLimit: '0',
        deadline: '3600',
        ttl: '60',
        cleanPodPolicy: 'All',
        nodeSelector: [{ key: 'pool', value: 'gpu' }],
        tolerations: [
          { key: 'gpu', operator: 'Exists', value: '', effect: 'NoSchedule' }
        ],
        labels: [{ key: 'team', value: 'ml' }],
        annotations: [{ key: 'note', value: 'hello world' }],
        queue: 'team-a',
        logdir: '/mnt/data/runs',
        extras: { metadata: { x: 1 } }
      }),
      FIELDS
    );
    expect(body).toEqual({
      name: 'demo',
      image: 'pytorch/pytorch:latest',
      script: 'print(1)\n',
      args: ['--epochs', '2'],
      workdir: '/work',
      nodes: 3,
      gpus: 2,
      gpuResource: 'nvidia.com/gpu',
      cpu: '4',
      memory: '16Gi',
      shm: '8Gi',
      nprocPerNode: 2,
      pvc: [
        { claim: 'data', mountPath: '/mnt/data', subPath: 'x', readOnly: true }
      ],
      env: { A: '1' },
      restartPolicy: 'Never',
      backoffLimit: 0,
      deadline: 3600,
      ttl: 60,
      cleanPodPolicy: 'All',
      nodeSelector: { pool: 'gpu' },
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      labels: { team: 'ml' },
      annotations: { note: 'hello world' },
      queue: 'team-a',
      logdir: '/mnt/data/runs',
      extras: { metadata: { x: 1 } }
    });
  });

  it('turns /dev/shm off with an empty size', () => {
    expect(stateToBody(form({ shmEnabled: false }), FIELDS).shm).toBe('');
  });

  it('passes what is not a number to the server, which says why', () => {
    expect(stateToBody(form({ nodes: 'two' }), FIELDS).nodes).toBe('two');
    expect(stateToBody(form({ nodes: '' }), FIELDS).nodes).toBeUndefined();
  });
});

describe('bodyToState', () => {
  const server: IJobBody = {
    name: 'demo',
    image: 'img',
    command: ['python', 'train.py'],
    args: ['--x', 'a b'],
    script: null,
    workdir: null,
    nodes: 2,
    gpus: 1,
    gpuResource: 'nvidia.com/gpu',
    cpu: null,
    memory: '8Gi',
    shm: null,
    nprocPerNode: 1,
    pvc: [{ claim: 'data', mountPath: '/data', subPath: '', readOnly: false }],
    env: { A: '1' },
    restartPolicy: 'OnFailure',
    backoffLimit: 3,
    deadline: null,
    ttl: null,
    cleanPodPolicy: 'Running',
    nodeSelector: {},
    tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: '' }],
    labels: {},
    annotations: { a: 'b' },
    queue: null,
    logdir: '/data/runs',
    extras: { spec: { runPolicy: { suspend: true } } }
  };

  it('reads a server body, keeping extras', () => {
    const state = bodyToState(server, form(), FIELDS);
    expect(state.command).toBe('python train.py');
    expect(state.args).toBe("--x 'a b'");
    expect(state.nodes).toBe('2');
    expect(state.shmEnabled).toBe(false);
    expect(state.shm).toBe('2Gi');
    expect(state.backoffLimit).toBe('3');
    expect(state.deadline).toBe('');
    expect(state.env).toEqual([{ key: 'A', value: '1' }]);
    expect(state.extras).toEqual({ spec: { runPolicy: { suspend: true } } });
  });

  it("keeps a TrainJob's unset image unset: its runtime decides", () => {
    const trainjob = { ...server, kind: 'TrainJob', image: null };
    const state = bodyToState(trainjob, form({ image: 'ours:1' }), FIELDS);
    expect(state.image).toBe('');
    expect(stateToBody(state, FIELDS)).not.toHaveProperty('image');
    // A PyTorchJob's is filled from the base, as before.
    expect(bodyToState({ ...server, image: null }, form(), FIELDS).image).toBe(
      form().image
    );
  });

  it('round-trips through stateToBody', () => {
    const body = stateToBody(bodyToState(server, form(), FIELDS), FIELDS);
    expect(body.command).toEqual(['python', 'train.py']);
    expect(body.args).toEqual(['--x', 'a b']);
    expect(body.shm).toBe('');
    expect(body.pvc).toEqual([{ claim: 'data', mountPath: '/data' }]);
    expect(body.tolerations).toEqual([
      { key: 'k', operator: 'Equal', value: 'v' }
    ]);
    expect(body.extras).toEqual(server.extras);
    expect(bodyToState(body, form(), FIELDS)).toEqual(
      bodyToState(server, form(), FIELDS)
    );
  });

  it('keeps a Worker-only job and tolerationSeconds through a clone', () => {
    const clone: IJobBody = {
      ...server,
      master: false,
      tolerations: [
        {
          key: 'node',
          operator: 'Exists',
          value: '',
          effect: 'NoExecute',
          tolerationSeconds: 30
        }
      ]
    };
    const body = stateToBody(bodyToState(clone, form(), FIELDS), FIELDS);
    expect(body.master).toBe(false);
    expect(body.tolerations).toEqual([
      {
        key: 'node',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 30
      }
    ]);
    expect(
      stateToBody(bodyToState(server, form(), FIELDS), FIELDS).master
    ).toBeUndefined();
  });

  it('keeps the priority class through a clone, and leaves it out when empty', () => {
    const clone: IJobBody = { ...server, priorityClassName: 'high' };
    const state = bodyToState(clone, form(), FIELDS);
    expect(state.priorityClassName).toBe('high');
    expect(stateToBody(state, FIELDS).priorityClassName).toBe('high');
    expect(stateToBody(form(), FIELDS).priorityClassName).toBeUndefined();
  });

  it('keeps the log archive through a clone, and leaves it to the server when empty', () => {
    for (const logArchive of ['off', '/data/logs']) {
      const state = bodyToState({ ...server, logArchive }, form(), FIELDS);
      expect(state.logArchive).toBe(logArchive);
      expect(stateToBody(state, FIELDS).logArchive).toBe(logArchive);
    }
    expect(stateToBody(form(), FIELDS).logArchive).toBeUndefined();
  });

  it('keeps the elastic fields through a clone; a new job is not elastic', () => {
    const clone: IJobBody = {
      ...server,
      master: false,
      minNodes: 1,
      maxNodes: 4,
      maxRestarts: 10,
      rdzvBackend: 'c10d'
    };
    const body = stateToBody(bodyToState(clone, form(), FIELDS), FIELDS);
    expect([body.minNodes, body.maxNodes, body.maxRestarts]).toEqual([
      1, 4, 10
    ]);
    expect(body.rdzvBackend).toBe('c10d');
    const fresh = stateToBody(form(), FIELDS);
    expect([
      fresh.minNodes,
      fresh.maxNodes,
      fresh.maxRestarts,
      fresh.rdzvBackend
    ]).toEqual([undefined, undefined, undefined, undefined]);
    expect(sectionOf('minNodes', FIELDS)).toBe('elastic');
  });

  it('switches to script mode for a script', () => {
    const state = bodyToState({ script: 'print(1)' }, form(), FIELDS);
    expect(state.mode).toBe('script');
    expect(state.script).toBe('print(1)');
  });
});

describe('defaultFormState', () => {
  it('starts from the defaults', () => {
    const state = defaultFormState({
      ...defaults,
      shm: '',
      pvc: [{ claim: 'home', mountPath: '/home/jovyan' }],
      workdir: '/home/jovyan'
    });
    expect(state.shmEnabled).toBe(false);
    expect(state.shm).toBe('2Gi');
    expect(state.pvc).toEqual([
      { claim: 'home', mountPath: '/home/jovyan', subPath: '', readOnly: false }
    ]);
    expect(state.workdir).toBe('/home/jovyan');
  });
});

describe('suggestName', () => {
  const zero = () => 0;
  it.each([
    ['train_ddp.py', 'train-ddp-aaaaa'],
    ['dir/My Script.py', 'my-script-aaaaa'],
    ['123.py', 'ptjob-aaaaa'],
    [null, 'ptjob-aaaaa']
  ])('derives %p into %p', (hint, name) => {
    expect(suggestName(hint, zero)).toBe(name);
  });

  it('is a DNS-1035 label', () => {
    for (let i = 0; i < 20; i++) {
      expect(suggestName('x'.repeat(80) + '.py')).toMatch(
        /^[a-z][-a-z0-9]{0,45}[a-z0-9]$/
      );
    }
  });
});

describe('errors', () => {
  const map = errorsByField(
    [
      { field: 'name', message: 'bad' },
      { field: 'env[A B]', message: 'bad key' },
      { field: 'pvc[0].mountPath', message: 'relative' },
      { field: 'name', message: 'too long' }
    ],
    nullTranslator.load('jupyter_pytorchjob')
  );

  it('groups messages by field', () => {
    expect(map.get('name')).toEqual(['bad', 'too long']);
  });

  it('finds the errors under a field', () => {
    expect(errorsUnder(map, 'env')).toEqual(['env[A B]: bad key']);
    expect(errorsUnder(map, 'pvc[0]')).toEqual(['pvc[0].mountPath: relative']);
    expect(errorsUnder(map, 'nodes')).toEqual([]);
  });

  it('knows the section of each field', () => {
    expect(sectionOf('name', FIELDS)).toBe('basics');
    expect(sectionOf('nprocPerNode', FIELDS)).toBe('resources');
    expect(sectionOf('pvc[1].claim', FIELDS)).toBe('storage');
    expect(sectionOf('tolerations[0].key', FIELDS)).toBe('advanced');
  });
});

describe('usesDataLoaderWorkers', () => {
  it('spots num_workers in a script or the command', () => {
    expect(
      usesDataLoaderWorkers(
        form({ mode: 'script', script: 'DataLoader(ds, num_workers=4)' })
      )
    ).toBe(true);
    expect(
      usesDataLoaderWorkers(form({ command: 'python t.py --num-workers 8' }))
    ).toBe(true);
    expect(usesDataLoaderWorkers(form({ command: 'python t.py' }))).toBe(false);
    expect(
      usesDataLoaderWorkers(form({ mode: 'script', script: 'num_workers=0' }))
    ).toBe(false);
  });
});

describe('formDefaults', () => {
  const config: IConfig = {
    version: '0.1.0',
    backend: 'local',
    defaults: { image: 'server-img', gpuResource: 'amd.com/gpu', shm: '1Gi' },
    fields: FIELDS,
    kinds: []
  };

  it("takes the server's defaults when the settings are empty", () => {
    expect(formDefaults(config, DEFAULT_SETTINGS)).toEqual({
      image: 'server-img',
      shm: '1Gi',
      gpuResource: 'amd.com/gpu',
      pvc: [],
      workdir: null,
      fields: FIELDS,
      kinds: []
    });
  });

  it('lets the settings override image and shm, or turn shm off', () => {
    const settings = {
      ...DEFAULT_SETTINGS,
      defaultImage: 'mine',
      defaultShm: '8Gi'
    };
    expect(formDefaults(config, settings).image).toBe('mine');
    expect(formDefaults(config, settings).shm).toBe('8Gi');
    expect(
      formDefaults(config, { ...DEFAULT_SETTINGS, defaultShm: 'off' }).shm
    ).toBe('');
  });
});

describe('bodyForFile', () => {
  it('runs the file from its directory under the server root', () => {
    expect(bodyForFile('sub/dir/train.py', '/home/jovyan')).toEqual({
      command: ['python', 'train.py'],
      workdir: '/home/jovyan/sub/dir'
    });
    expect(bodyForFile('train.py', '/srv/root/')).toEqual({
      command: ['python', 'train.py'],
      workdir: '/srv/root/'
    });
  });

  it('falls back to a path relative to the root', () => {
    expect(bodyForFile('sub/train.py', null)).toEqual({
      command: ['python', 'sub/train.py']
    });
  });
});

describe('job kinds', () => {
  const both = { ...defaults, kinds: KINDS };
  const trainjob = kindFields(KINDS, 'TrainJob');

  it('starts on the kind the backend prefers (the only one it has)', () => {
    expect(defaultFormState(both).kind).toBe('PyTorchJob');
    expect(defaultFormState({ ...defaults, kinds: [KINDS[1]] }).kind).toBe(
      'TrainJob'
    );
    // The backend did not say: the server's default, nothing sent.
    expect(defaultFormState(defaults).kind).toBe('');
    expect(stateToBody(form(), FIELDS)).not.toHaveProperty('kind');
  });

  it('sends kind and runtime, and leaves out what the kind cannot express', () => {
    const state = form({
      kind: 'TrainJob',
      runtime: 'torch-distributed',
      command: 'torchrun train.py',
      nodes: '2',
      ttl: '60',
      backoffLimit: '2',
      minNodes: '1',
      priorityClassName: 'high',
      workdir: '/w'
    });
    const body = stateToBody(state, FIELDS, trainjob);
    expect(body).toMatchObject({
      kind: 'TrainJob',
      runtime: 'torch-distributed',
      nodes: 2,
      shm: '2Gi'
    });
    for (const hidden of [
      'ttl',
      'backoffLimit',
      'minNodes',
      'priorityClassName',
      'workdir',
      'restartPolicy',
      'cleanPodPolicy'
    ]) {
      expect(body).not.toHaveProperty(hidden);
    }
    // A PyTorchJob has no runtime.
    const pytorch = stateToBody(
      { ...state, kind: 'PyTorchJob' },
      FIELDS,
      kindFields(KINDS, 'PyTorchJob')
    );
    expect(pytorch).not.toHaveProperty('runtime');
    expect(pytorch).toMatchObject({ kind: 'PyTorchJob', ttl: 60 });
  });

  it('reads kind and runtime back from a body', () => {
    const state = bodyToState(
      { name: 'tj', kind: 'TrainJob', runtime: 'torch-custom' },
      defaultFormState(both),
      FIELDS
    );
    expect(state.kind).toBe('TrainJob');
    expect(state.runtime).toBe('torch-custom');
    expect(bodyToState({ name: 'x' }, state, FIELDS).kind).toBe('TrainJob');
  });

  it("shows the chosen kind's fields and sections only", () => {
    expect(isShown('ttl', FIELDS, trainjob)).toBe(false);
    expect(isShown('runtime', FIELDS, trainjob)).toBe(true);
    expect(isShown('pvc', FIELDS, trainjob)).toBe(true);
    // The form's own settings are no body fields: always shown.
    expect(isShown('mode', FIELDS, trainjob)).toBe(true);
    expect(isShown('ttl', FIELDS, null)).toBe(true);
    expect(sectionShown('elastic', FIELDS, trainjob)).toBe(false);
    expect(sectionShown('storage', FIELDS, trainjob)).toBe(true);
    expect(
      sectionShown('elastic', FIELDS, kindFields(KINDS, 'PyTorchJob'))
    ).toBe(true);
    expect(kindFields(KINDS, 'trainjob')).toEqual(trainjob);
    expect(kindFields(KINDS, 'Other')).toBeNull();
  });
});
