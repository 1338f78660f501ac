/**
 * Tests of the job form's view: every field with its label, help and
 * errors; edits reach the model; sections open and close.
 */

import { nullTranslator } from '@jupyterlab/translation';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { JobForm } from '../form/form';
import { FormClient, JobFormModel } from '../form/model';
import { formTexts } from '../form/texts';
import { CodeEditor } from '@jupyterlab/codeeditor';
import { PyTorchJobAPIError } from '../request';
import { IFieldInfo } from '../tokens';
import FIELDS_JSON from './fields.json';
import KINDS from './kinds.json';

// The server's `fields`, as `GET config` types them.
const FIELDS = FIELDS_JSON as Record<string, IFieldInfo>;

const trans = nullTranslator.load('jupyter_pytorchjob');

// What the server's config gives every form here.
const DEFAULTS = {
  image: 'img',
  shm: '2Gi',
  gpuResource: 'nvidia.com/gpu',
  fields: FIELDS
};

function fakeClient(): FormClient {
  return {
    // Validation never answers: the test sets the errors itself.
    render: jest.fn().mockReturnValue(new Promise(() => undefined)),
    renderYaml: jest.fn(),
    submit: jest.fn(),
    volumes: jest.fn().mockResolvedValue([
      {
        name: 'data',
        capacity: '10Gi',
        accessModes: ['ReadWriteMany'],
        phase: 'Bound'
      }
    ])
  } as unknown as FormClient;
}

async function rendered(form: JobForm): Promise<void> {
  MessageLoop.sendMessage(form, Widget.Msg.UpdateRequest);
  await form.renderPromise;
  await new Promise(resolve => setTimeout(resolve, 0));
}

/**
 * Type into a control as React sees it.
 */
function type(
  control: HTMLInputElement | HTMLSelectElement,
  value: string
): void {
  const setter = Object.getOwnPropertyDescriptor(
    Object.getPrototypeOf(control),
    'value'
  )!.set!;
  setter.call(control, value);
  control.dispatchEvent(
    new Event(control instanceof HTMLSelectElement ? 'change' : 'input', {
      bubbles: true
    })
  );
}

describe('JobForm', () => {
  let model: JobFormModel;
  let form: JobForm;
  const texts = formTexts(trans).fields;
  const control = <T extends Element = HTMLInputElement>(selector: string) =>
    form.node.querySelector(selector) as T;

  beforeEach(async () => {
    model = new JobFormModel({
      client: fakeClient(),
      defaults: {
        image: 'img',
        shm: '2Gi',
        gpuResource: 'nvidia.com/gpu',
        fields: FIELDS
      },
      initial: { command: ['python', 'train.py'] },
      debounce: 3600 * 1000
    });
    form = new JobForm({ model, trans, onSubmitted: () => undefined });
    form.id = 'form';
    Widget.attach(form, document.body);
    await model.loadVolumes();
    await rendered(form);
  });

  afterEach(() => {
    Widget.detach(form);
    form.dispose();
  });

  it('labels each open field once, with its help and placeholder', () => {
    for (const name of ['name', 'image', 'command', 'nodes', 'logdir']) {
      const field = control(`[data-field="${name}"]`);
      expect(field.querySelector('label')!.textContent).toBe(
        texts[name as keyof typeof texts].label
      );
    }
    expect(control('#form-f-command').placeholder).toBe(
      texts.command.placeholder
    );
    expect(control('#form-f-name-hint').textContent).toBe(texts.name.hint);
    expect(control('#form-f-nodes-hint').textContent).toBe('1 node = 1 master');
    // Advanced starts closed.
    expect(control('[data-field="queue"]')).toBeNull();
  });

  it('opens and closes a section', async () => {
    const advanced = control<HTMLButtonElement>(
      '[data-section="advanced"] h3 button'
    );
    expect(advanced.getAttribute('aria-expanded')).toBe('false');
    advanced.click();
    await rendered(form);
    expect(advanced.getAttribute('aria-expanded')).toBe('true');
    expect(control('[data-field="queue"] label').textContent).toBe(
      texts.queue.label
    );
    advanced.click();
    await rendered(form);
    expect(control('[data-field="queue"]')).toBeNull();
  });

  it('hands edits of every kind of control to the model', async () => {
    control<HTMLButtonElement>('[data-section="advanced"] h3 button').click();
    await rendered(form);
    type(control('#form-f-name'), 'typed');
    type(control('#form-f-nodes'), '3');
    type(control<HTMLSelectElement>('#form-f-restartPolicy'), 'Never');
    control<HTMLButtonElement>(
      '[data-field="env"] .jp-PyTorchJobForm-add'
    ).click();
    await rendered(form);
    type(control('[aria-label="Environment variables: key 1"]'), 'SEED');
    control<HTMLButtonElement>(
      '[data-field="tolerations"] .jp-PyTorchJobForm-add'
    ).click();
    await rendered(form);
    type(
      control<HTMLSelectElement>('[aria-label="Operator of toleration 1"]'),
      'Exists'
    );
    control<HTMLButtonElement>(
      '[data-field="pvc"] .jp-PyTorchJobForm-add'
    ).click();
    await rendered(form);
    type(control('[aria-label="Claim of volume 1"]'), 'data');
    control('[aria-label="Mount a memory-backed /dev/shm"]').click();
    control<HTMLInputElement>('input[type="radio"]:not(:checked)').click();
    await rendered(form);

    expect(model.state).toMatchObject({
      name: 'typed',
      nodes: '3',
      restartPolicy: 'Never',
      env: [{ key: 'SEED', value: '' }],
      tolerations: [{ key: '', operator: 'Exists', value: '', effect: '' }],
      pvc: [{ claim: 'data', mountPath: '', subPath: '', readOnly: false }],
      shmEnabled: false,
      mode: 'script'
    });
    // The claim's details from the namespace, the script field in place of
    // the command, the value of an `Exists` toleration disabled.
    expect(control('[data-row="0"] .jp-PyTorchJobForm-hint').textContent).toBe(
      '10Gi · ReadWriteMany · Bound'
    );
    expect(control('#form-f-script')).not.toBeNull();
    expect(control('#form-f-command')).toBeNull();
    expect(control('[aria-label="Value of toleration 1"]').disabled).toBe(true);
    expect(control('#form-f-shm-hint').textContent).toBe(texts.shm.hintOff);
  });

  it('shows the errors under their fields and opens their section', async () => {
    const internals = model as unknown as {
      _errors: Map<string, string[]>;
      _attempted: boolean;
    };
    internals._errors = new Map([
      ['name', ['must be a DNS-1035 label']],
      ['tolerations[0].key', ['is required']]
    ]);
    internals._attempted = true;
    await rendered(form);
    const name = control('[data-field="name"]');
    expect(name.classList).toContain('jp-mod-invalid');
    expect(control('#form-f-name').getAttribute('aria-invalid')).toBe('true');
    // A message that starts mid-sentence starts with its field's label.
    expect(control('#form-f-name-error').textContent).toBe(
      'Name must be a DNS-1035 label'
    );
    expect(
      control('[data-section="advanced"] .jp-PyTorchJobForm-sectionError')
    ).not.toBeNull();
    expect(
      control('[data-field="tolerations"] .jp-PyTorchJobForm-error').textContent
    ).toBe('tolerations[0].key: is required');
  });
});

describe('JobForm errors and titles (#32)', () => {
  let model: JobFormModel;
  let form: JobForm;
  let client: Record<string, jest.Mock>;
  const control = <T extends Element = HTMLInputElement>(selector: string) =>
    form.node.querySelector(selector) as T;

  beforeEach(async () => {
    client = fakeClient() as unknown as Record<string, jest.Mock>;
    // The server finds the fresh form's command missing.
    client.render = jest
      .fn()
      .mockRejectedValue(
        new PyTorchJobAPIError(400, 'invalid', 'command', [
          { field: 'command', message: 'is required' }
        ])
      );
    model = new JobFormModel({
      client: client as unknown as FormClient,
      defaults: { ...DEFAULTS, kinds: KINDS },
      debounce: 3600 * 1000
    });
    form = new JobForm({ model, trans, onSubmitted: () => undefined });
    form.id = 'form';
    Widget.attach(form, document.body);
    await rendered(form);
  });

  afterEach(() => {
    Widget.detach(form);
    form.dispose();
  });

  it('shows no errors on a fresh form, though the server has some', async () => {
    (model as unknown as { _errors: Map<string, string[]> })._errors = new Map([
      ['command', ['is required']]
    ]);
    await rendered(form);
    expect(control('.jp-PyTorchJobForm-error')).toBeNull();
    expect(control('.jp-PyTorchJobForm-validity').textContent).toBe('');
  });

  it('on a refused submit names the fields to fix and focuses the first', async () => {
    client.submit.mockRejectedValue(
      new PyTorchJobAPIError(400, 'invalid', 'command', [
        { field: 'command', message: 'is required: give a command' },
        { field: 'memory', message: 'must be a quantity' }
      ])
    );
    await form.submit();
    expect(control('.jp-PyTorchJobForm-validity').textContent).toBe(
      '2 fields to fix: Command, Memory per node'
    );
    expect(control('#form-f-command-error').textContent).toBe(
      'Command is required: give a command'
    );
    expect(document.activeElement).toBe(control('#form-f-command'));
  });

  it('names the kind it makes in its title and its tab', async () => {
    expect(form.title.label).toBe('New PyTorchJob');
    expect(control('h2').textContent).toBe('New PyTorchJob');
    expect(control('#form-f-nodes-hint').textContent).toBe('1 node = 1 master');
    model.set({ kind: 'TrainJob', nodes: '2' });
    await rendered(form);
    expect(form.title.label).toBe('New TrainJob');
    expect(control('h2').textContent).toBe('New TrainJob');
    expect(control('#form-f-nodes-hint').textContent).toBe(
      '2 nodes: node-0 leads'
    );
  });

  it('names the paths it keeps from the YAML', async () => {
    model.set({
      extras: {
        spec: { runPolicy: { schedulingPolicy: { minAvailable: 2 } } },
        metadata: { finalizers: ['x'] }
      }
    });
    control<HTMLButtonElement>('[data-section="advanced"] h3 button').click();
    await rendered(form);
    expect(
      control('[data-field="extras"] .jp-PyTorchJobForm-hint').textContent
    ).toBe(
      'Kept from the YAML: spec.runPolicy.schedulingPolicy.minAvailable, metadata.finalizers'
    );
  });
});

describe('JobForm YAML preview', () => {
  it("edits the manifest in JupyterLab's editor: YAML, line numbers", async () => {
    const made: CodeEditor.IOptions[] = [];
    const factory = ((options: CodeEditor.IOptions) => {
      made.push(options);
      return {
        model: options.model,
        dispose: jest.fn()
      } as unknown as CodeEditor.IEditor;
    }) as CodeEditor.Factory;
    const model = new JobFormModel({
      client: fakeClient(),
      defaults: DEFAULTS,
      initial: { command: ['python', 'train.py'] },
      debounce: 3600 * 1000
    });
    const form = new JobForm({
      model,
      trans,
      onSubmitted: () => undefined,
      editorFactory: factory
    });
    Widget.attach(form, document.body);
    try {
      form.preview = true;
      await rendered(form);
      expect(made).toHaveLength(1);
      const { host, model: text, config } = made[0];
      expect(host.closest('.jp-PyTorchJobForm-yaml')).not.toBeNull();
      expect(
        form.node.querySelector('textarea.jp-PyTorchJobForm-yamlText')
      ).toBeNull();
      expect(text.mimeType).toBe('text/x-yaml');
      expect(config?.lineNumbers).toBe(true);
      // An edit in the editor is the draft; a discard puts the editor back.
      text.sharedModel.setSource('kind: X\n');
      expect(model.yamlDraft).toBe('kind: X\n');
      expect(model.yamlEdited).toBe(true);
      model.resetYaml();
      await rendered(form);
      expect(text.sharedModel.getSource()).toBe(model.yamlDraft);
    } finally {
      Widget.detach(form);
      form.dispose();
    }
  });
});

describe('JobForm of a field only the table declares', () => {
  it('shows it in its section with the label and hint the server sends', async () => {
    const model = new JobFormModel({
      client: fakeClient(),
      defaults: {
        ...DEFAULTS,
        fields: {
          ...FIELDS,
          pullFrom: {
            section: 'basics',
            default: null,
            nullable: true,
            form: 'list',
            label: 'Pull from',
            hint: 'Names, separated by spaces.'
          }
        }
      },
      initial: { command: ['python', 'train.py'] },
      debounce: 3600 * 1000
    });
    const form = new JobForm({ model, trans, onSubmitted: () => undefined });
    form.id = 'form';
    Widget.attach(form, document.body);
    try {
      await rendered(form);
      const field = form.node.querySelector('[data-field="pullFrom"]')!;
      expect(field.querySelector('label')!.textContent).toBe('Pull from');
      expect(field.querySelector('#form-f-pullFrom-hint')!.textContent).toBe(
        'Names, separated by spaces.'
      );
      type(field.querySelector('input')!, 'a b');
      expect((model.body as Record<string, unknown>).pullFrom).toEqual([
        'a',
        'b'
      ]);
    } finally {
      Widget.detach(form);
      form.dispose();
    }
  });
});

describe('JobForm kinds', () => {
  const texts = formTexts(trans).fields;

  async function open(kinds: typeof KINDS): Promise<JobForm> {
    const client = fakeClient() as unknown as Record<string, jest.Mock>;
    client.runtimes = jest.fn().mockResolvedValue([
      {
        name: 'torch-distributed',
        kind: 'ClusterTrainingRuntime',
        framework: 'torch',
        deprecated: false,
        nodes: 2,
        image: 'torch:2',
        policy: 'torch',
        replicatedJobs: ['node'],
        initializers: [],
        unusable: null
      },
      {
        name: 'old-torch',
        kind: 'TrainingRuntime',
        framework: 'torch',
        deprecated: true,
        nodes: 1,
        image: 'torch:1',
        policy: 'torch',
        replicatedJobs: ['node'],
        initializers: [],
        unusable: null
      },
      {
        name: 'mpi-distributed',
        kind: 'ClusterTrainingRuntime',
        framework: 'deepspeed',
        deprecated: false,
        nodes: 1,
        image: 'ds:1',
        policy: 'mpi',
        replicatedJobs: ['launcher', 'node'],
        initializers: [],
        unusable: 'runs mpi jobs, not torch (torchrun) ones'
      }
    ]);
    const model = new JobFormModel({
      client: client as unknown as FormClient,
      defaults: {
        image: 'img',
        shm: '2Gi',
        gpuResource: 'nvidia.com/gpu',
        fields: FIELDS,
        kinds
      },
      initial: { command: ['python', 'train.py'] },
      debounce: 3600 * 1000
    });
    const form = new JobForm({ model, trans, onSubmitted: () => undefined });
    form.id = 'form';
    Widget.attach(form, document.body);
    await model.loadRuntimes();
    await rendered(form);
    return form;
  }

  function close(form: JobForm): void {
    Widget.detach(form);
    form.dispose();
  }

  it('has no kind switch where the backend runs one kind', async () => {
    const form = await open([KINDS[1]]);
    expect(form.node.querySelector('#form-f-kind')).toBeNull();
    // That kind is a TrainJob: its runtime picker, no Elastic section.
    expect(form.node.querySelector('#form-f-runtime')).not.toBeNull();
    expect(form.node.querySelector('[data-section="elastic"]')).toBeNull();
    expect(form.model.body.kind).toBe('TrainJob');
    close(form);
  });

  it('switches to a TrainJob: runtime picker in, what it cannot express out', async () => {
    const form = await open(KINDS);
    const q = <T extends Element = HTMLInputElement>(selector: string) =>
      form.node.querySelector(selector) as T;
    const kind = q<HTMLSelectElement>('#form-f-kind');
    expect(q('[data-field="kind"] label').textContent).toBe(texts.kind.label);
    expect([...kind.options].map(o => o.value)).toEqual([
      'PyTorchJob',
      'TrainJob'
    ]);
    expect(q('#form-f-runtime')).toBeNull();
    expect(q('[data-section="elastic"]')).not.toBeNull();

    type(kind, 'TrainJob');
    await rendered(form);
    q<HTMLButtonElement>('[data-section="advanced"] h3 button').click();
    await rendered(form);
    expect(q('[data-section="elastic"]')).toBeNull();
    for (const hidden of ['ttl', 'backoffLimit', 'restartPolicy', 'workdir']) {
      expect(q(`[data-field="${hidden}"]`)).toBeNull();
    }
    for (const kept of ['env', 'tolerations', 'deadline', 'pvc', 'shm']) {
      expect(q(`[data-field="${kept}"]`)).not.toBeNull();
    }
    const picker = q<HTMLSelectElement>('#form-f-runtime');
    expect([...picker.options].map(o => [o.textContent, o.disabled])).toEqual([
      [texts.runtime.choices![''], false],
      ['torch-distributed (torch)', false],
      ['old-torch (torch) · deprecated', false],
      [
        'mpi-distributed (deepspeed) · unusable: runs mpi jobs, not torch (torchrun) ones',
        true
      ]
    ]);

    type(picker, 'torch-distributed');
    await rendered(form);
    expect(form.model.state).toMatchObject({
      kind: 'TrainJob',
      runtime: 'torch-distributed',
      image: '',
      nodes: '2'
    });
    // The runtime's image runs: shown as the placeholder, not pinned as a value.
    expect(q('#form-f-image').value).toBe('');
    expect(q('#form-f-image').placeholder).toBe('the runtime’s image');
    expect(q('#form-f-nprocPerNode').placeholder).toBe(
      'the runtime’s: GPUs, else CPUs'
    );
    expect(q('#form-f-runtime-hint').textContent).toBe(
      'ClusterTrainingRuntime · 2 nodes · torch:2'
    );
    close(form);
  });
});
