/**
 * The server's messages in the user's language: translated by code through
 * the zh_CN catalogue, parameters (nested messages too) put in, and the
 * server's English text where the code or its parameters are unknown.
 */

import { nullTranslator } from '@jupyterlab/translation';

import { explainJob } from '../failure';
import { errorsByField } from '../form/state';
import { formatError } from '../format';
import { errorFromBody } from '../request';
import {
  SERVER_MESSAGES,
  translateCoded,
  translateMessage,
  warningsOf
} from '../servermessages';
import { IJob } from '../tokens';
import { chineseTranslator, readCatalogue } from './chinese';

const zh = chineseTranslator();
// Without a language pack: the English templates.
const trans = nullTranslator.load('jupyter_pytorchjob');

// As the server sends `nodes: -1` back (POST render's 400).
const NODES = {
  field: 'nodes',
  code: 'whole_number',
  params: { minimum: 1, got: -1 },
  message: 'must be a whole number >= 1, got -1'
};

describe('translateMessage', () => {
  it('translates a code with its parameters', () => {
    expect(translateMessage(NODES, zh)).toBe('必须是 >= 1 的整数，实际为 -1');
  });

  it('gives the English template filled in without a translation', () => {
    expect(translateMessage(NODES, trans)).toBe(NODES.message);
  });

  it('translates a message nested as a parameter', () => {
    const nested = {
      code: 'secret_name',
      params: {
        problem: {
          code: 'max_length',
          params: { maximum: 253, length: 300 },
          message: 'must be at most 253 characters, got 300'
        }
      },
      message:
        'is the name of a Secret and must be at most 253 characters, got 300'
    };
    expect(translateMessage(nested, zh)).toBe(
      '是一个 Secret 的名称，且最多 253 个字符，实际为 300'
    );
    expect(translateMessage(nested, trans)).toBe(nested.message);
  });

  it('writes doubled braces as braces', () => {
    const message = {
      code: 'pvc_item',
      params: {},
      message: 'must be an object {claim, mountPath, subPath, readOnly}'
    };
    expect(translateMessage(message, trans)).toBe(message.message);
    expect(translateMessage(message, zh)).toBe(
      '必须是对象 {claim, mountPath, subPath, readOnly}'
    );
  });

  it("falls back to the server's text for a code it does not know", () => {
    const message = {
      code: 'from_a_newer_server',
      params: { x: 1 },
      message: 'something new'
    };
    expect(translateMessage(message, zh)).toBe('something new');
  });

  it("falls back to the server's text without a code or parameters", () => {
    expect(translateMessage({ message: 'from Kubernetes' }, zh)).toBe(
      'from Kubernetes'
    );
    expect(
      translateMessage({ code: 'whole_number', message: 'plain' }, zh)
    ).toBe('plain');
  });

  it("falls back to the server's text when a parameter is missing", () => {
    const message = {
      code: 'whole_number',
      params: { minimum: 1 },
      message: 'must be a whole number >= 1, got x'
    };
    expect(translateMessage(message, zh)).toBe(message.message);
  });

  it('is never fooled by a code from the prototype', () => {
    const message = { code: 'toString', params: {}, message: 'English' };
    expect(translateMessage(message, zh)).toBe('English');
  });

  it('has a template for every code, the zh_CN catalogue one each', () => {
    const catalogue = readCatalogue();
    const missing = Object.entries(SERVER_MESSAGES).filter(
      ([, template]) => !catalogue[template]?.[0]
    );
    expect(missing).toEqual([]);
  });
});

describe('the server errors the UI shows', () => {
  const body = {
    ...NODES,
    errors: [
      NODES,
      {
        field: 'pvc[0].mountPath',
        code: 'mount_root',
        params: {},
        message: "must not be '/'"
      }
    ]
  };

  it('keep their codes from the answer', () => {
    const error = errorFromBody(400, body);
    expect(error.problem).toEqual({
      code: 'whole_number',
      params: { minimum: 1, got: -1 },
      message: NODES.message
    });
    expect(error.errors[1].code).toBe('mount_root');
  });

  it("are the form's field errors in the user's language", () => {
    const errors = errorsByField(errorFromBody(400, body).errors, zh);
    expect(errors.get('nodes')).toEqual(['必须是 >= 1 的整数，实际为 -1']);
    expect(errors.get('pvc[0].mountPath')).toEqual(["不能是 '/'"]);
  });

  it("are toasts in the user's language (submit, delete, suspend)", () => {
    const exists = errorFromBody(409, {
      code: 'job_exists',
      params: { name: "'mnist'" },
      message:
        "a job named 'mnist' already exists; choose another name or delete it first"
    });
    expect(formatError(exists, zh)).toBe(
      "名为 'mnist' 的作业已存在；请换一个名称或先删除它"
    );
    const kubernetes = errorFromBody(403, { message: 'pods is forbidden' });
    expect(formatError(kubernetes, zh)).toBe('pods is forbidden');
  });
});

describe('why a job failed or waits', () => {
  const job: IJob = {
    name: 'big',
    state: 'Failed',
    replicas: [],
    nodes: 1,
    gpus: 0,
    created: 0,
    failure: {
      replica: 'master-0',
      exitCode: 137,
      signal: 'SIGKILL',
      reason: 'OOMKilled',
      message: '',
      tail: [],
      logSource: null,
      hint: "The replica ran out of memory: raise --memory (or lower the batch size or the DataLoader's num_workers).",
      hintCode: 'hint_oom',
      hintParams: { memory: '--memory' }
    }
  };

  it("gives the hint in the user's language", () => {
    expect(explainJob(job, zh)?.title).toBe(
      '副本内存不足：请调大 --memory（或减小批大小或 DataLoader 的 num_workers）。'
    );
    // A server without codes: its English hint.
    const older = { ...job.failure!, hintCode: undefined };
    expect(explainJob({ ...job, failure: older }, zh)?.title).toBe(
      job.failure!.hint
    );
  });

  it('says in Chinese that a suspended job waits, the platform as it said', () => {
    const suspended: IJob = {
      ...job,
      state: 'Suspended',
      failure: null,
      waiting: {
        reason: 'Suspended',
        message:
          'the job is suspended: its pods are created when it is resumed',
        messageCode: 'waiting_suspended',
        messageParams: {},
        hint: 'Resume it: ptjob resume <name>.',
        hintCode: 'hint_resume',
        hintParams: {}
      }
    };
    expect(explainJob(suspended, zh)).toEqual({
      text: '作业已挂起：恢复后才会创建它的 pod',
      title: '恢复它：ptjob resume <name>。',
      kind: 'waiting'
    });
    const unschedulable: IJob = {
      ...suspended,
      state: 'Created',
      waiting: {
        reason: 'Unschedulable',
        message: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.',
        messageCode: null,
        messageParams: null,
        hint: 'No node has the GPUs asked for free: lower --gpus or wait.',
        hintCode: 'hint_no_gpus',
        hintParams: { gpus: '--gpus' }
      }
    };
    expect(explainJob(unschedulable, zh)).toEqual({
      text: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.',
      title: '没有节点有足够的空闲 GPU：请减少 --gpus 或等待。',
      kind: 'waiting'
    });
  });
});

describe("a job's and its replicas' own messages", () => {
  it("are in the user's language where the words are the server's", () => {
    const job: IJob = {
      name: 'gone',
      state: 'Failed',
      replicas: [
        {
          name: 'master-0',
          phase: 'Deleted',
          restarts: 0,
          reason: 'Deleted',
          message: 'the pod was deleted after the job finished',
          messageCode: 'replica_deleted',
          messageParams: {}
        }
      ],
      nodes: 1,
      gpus: 0,
      created: 0
    };
    expect(explainJob(job, zh)).toEqual({
      text: 'master-0: Deleted',
      title: '作业结束后该 pod 已被删除',
      kind: 'waiting'
    });
  });

  it("keep the platform's words as they are", () => {
    expect(translateCoded('Back-off pulling image', null, null, zh)).toBe(
      'Back-off pulling image'
    );
    expect(translateCoded(null, 'replica_deleted', {}, zh)).toBe('');
    expect(
      translateCoded(
        'no operator has picked this job up in 40 s: …',
        'no_operator',
        { seconds: 40 },
        zh
      )
    ).toMatch(/^40 秒内没有 operator 接手此作业/);
  });
});

describe('warningsOf', () => {
  const always =
    'restart policy Always restarts a node even after it exits 0: the Master never succeeds, and the job ends Failed once the restarts reach the backoff limit (the Training Operator does this in a cluster, the local backend likewise); use OnFailure to restart only failed nodes';

  it("gives a render's or a submit's warnings in the user's language", () => {
    const answer = {
      warnings: [always],
      warningMessages: [
        { code: 'warn_restart_always', params: {}, message: always }
      ]
    };
    expect(warningsOf(answer, zh)).toEqual([
      zh.__(SERVER_MESSAGES.warn_restart_always)
    ]);
    expect(warningsOf(answer, zh)[0]).toMatch(/^重启策略 Always/);
    expect(warningsOf(answer, trans)).toEqual([always]);
  });

  it('gives an older server its English warnings', () => {
    expect(warningsOf({ warnings: ['as it was'] }, zh)).toEqual(['as it was']);
    expect(warningsOf({}, zh)).toEqual([]);
  });
});
