/**
 * What the form says about each setting, declared once: its label, its help
 * and its placeholder; and the titles of the form's sections.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';

import { FormSection } from './state';

/**
 * What the form says about one setting.
 */
export interface IFieldText {
  /**
   * The label (the legend of a list of rows).
   */
  label: string;

  /**
   * The help under the control.
   */
  hint?: string;

  /**
   * The help when the setting is turned off (`/dev/shm`).
   */
  hintOff?: string;

  /**
   * The example in an empty control.
   */
  placeholder?: string;

  /**
   * The accessible name of a group of controls.
   */
  ariaLabel?: string;

  /**
   * The labels of the choices, by value (a value without one shows as is).
   */
  choices?: Record<string, string>;
}

/**
 * The texts of the form: section titles and settings.
 */
export type FormTexts = ReturnType<typeof formTexts>;

/**
 * The settings the form shows.
 */
export type FieldName = keyof FormTexts['fields'];

/**
 * The texts of the form in the user's language.
 */
export function formTexts(trans: TranslationBundle) {
  const sections: Record<FormSection, string> = {
    basics: trans.__('Basics'),
    resources: trans.__('Resources'),
    storage: trans.__('Storage'),
    elastic: trans.__('Elastic'),
    advanced: trans.__('Advanced')
  };
  const fields = {
    ...basicsTexts(trans),
    ...resourcesTexts(trans),
    ...storageTexts(trans),
    ...elasticTexts(trans),
    ...advancedTexts(trans)
  };
  // Every entry is an IFieldText; the keys are the settings the form shows.
  return {
    sections,
    fields: fields as Record<keyof typeof fields, IFieldText>
  };
}

/**
 * The texts of the Basics section.
 */
function basicsTexts(trans: TranslationBundle) {
  return {
    name: {
      label: trans.__('Name'),
      hint: trans.__(
        'Lower-case letters, digits and “-”, starting with a letter.'
      )
    },
    image: { label: trans.__('Image') },
    kind: {
      label: trans.__('Kind'),
      hint: trans.__(
        'PyTorchJob: Kubeflow Training Operator v1. TrainJob: Kubeflow Trainer v2, on a runtime.'
      )
    },
    runtime: {
      label: trans.__('Runtime'),
      hint: trans.__(
        'The Kubeflow Trainer runtime the TrainJob runs on; picking one takes its node count, and its image runs unless you give another.'
      ),
      choices: { '': trans.__('default (torch-distributed)') }
    },
    mode: {
      label: trans.__('Runs'),
      ariaLabel: trans.__('What the job runs'),
      choices: {
        command: trans.__('A command'),
        script: trans.__('A script shipped with the job')
      }
    },
    command: {
      label: trans.__('Command'),
      placeholder: Private.EXAMPLE_COMMAND,
      hint: trans.__(
        'Split into words like a shell would (quotes work); no shell runs it.'
      )
    },
    script: {
      label: trans.__('Script'),
      hint: trans.__(
        'Python source, at most 120 KiB, run with python -u (or torchrun with several processes per node).'
      )
    },
    args: { label: trans.__('Arguments'), placeholder: Private.EXAMPLE_ARGS },
    workdir: {
      label: trans.__('Working directory'),
      placeholder: trans.__('the image’s'),
      hint: trans.__('An absolute path.')
    }
  } satisfies Record<string, IFieldText>;
}

/**
 * The texts of the Resources section.
 */
function resourcesTexts(trans: TranslationBundle) {
  return {
    nodes: { label: trans.__('Nodes') },
    gpus: { label: trans.__('GPUs per node') },
    gpuResource: { label: trans.__('GPU resource name') },
    cpu: {
      label: trans.__('CPU per node'),
      placeholder: trans.__('e.g. 4 or 500m')
    },
    memory: {
      label: trans.__('Memory per node'),
      placeholder: trans.__('e.g. 16Gi')
    },
    nprocPerNode: {
      label: trans.__('Processes per node'),
      placeholder: trans.__('default'),
      hint: trans.__(
        'Default: the GPUs per node, or 1 on CPU. More than 1 runs torchrun.'
      )
    }
  } satisfies Record<string, IFieldText>;
}

/**
 * The texts of the Storage section.
 */
function storageTexts(trans: TranslationBundle) {
  return {
    pvc: { label: trans.__('Volumes (PVCs)') },
    shm: {
      label: trans.__('Shared memory (/dev/shm)'),
      ariaLabel: trans.__('Mount a memory-backed /dev/shm'),
      hint: trans.__(
        'A memory-backed emptyDir at /dev/shm in every replica; DataLoader workers share batches through it. It counts against the memory limit.'
      ),
      hintOff: trans.__(
        'Without a memory-backed /dev/shm, the container runtime gives 64 MiB: PyTorch DataLoader workers (num_workers > 0) then fail with “bus error” or “insufficient shared memory”.'
      )
    },
    logdir: {
      label: trans.__('TensorBoard log directory'),
      placeholder: Private.EXAMPLE_LOGDIR,
      hint: trans.__(
        'The job finds it in $PTJOB_LOGDIR; put it on a PVC so that TensorBoard can read it.'
      )
    },
    logArchive: {
      label: trans.__('Log archive'),
      placeholder: trans.__('the log directory, or off'),
      hint: trans.__(
        "Each replica's output is also kept in <directory>/.ptjob-logs/<job>/ on the PVC, so its logs outlive its pods."
      )
    }
  } satisfies Record<string, IFieldText>;
}

/**
 * The texts of the Elastic section.
 */
function elasticTexts(trans: TranslationBundle) {
  return {
    minNodes: {
      label: trans.__('Minimum Worker nodes'),
      hint: trans.__(
        'Any value in this section makes the job elastic: torchrun waits for at least this many Workers and carries on when some leave.'
      )
    },
    maxNodes: { label: trans.__('Maximum Worker nodes') },
    maxRestarts: {
      label: trans.__('Maximum restarts'),
      hint: trans.__('Restarts of the worker group before the job fails.')
    },
    rdzvBackend: {
      label: trans.__('Rendezvous backend'),
      choices: { '': trans.__('default (c10d)') }
    }
  } satisfies Record<string, IFieldText>;
}

/**
 * The texts of the Advanced section.
 */
function advancedTexts(trans: TranslationBundle) {
  return {
    env: { label: trans.__('Environment variables') },
    restartPolicy: { label: trans.__('Restart policy') },
    backoffLimit: {
      label: trans.__('Backoff limit'),
      hint: trans.__('Restarts before the job fails.')
    },
    deadline: {
      label: trans.__('Deadline (seconds)'),
      hint: trans.__('activeDeadlineSeconds: the job fails after it.')
    },
    ttl: {
      label: trans.__('TTL after finished (seconds)'),
      hint: trans.__('The finished job is removed after it.')
    },
    cleanPodPolicy: {
      label: trans.__('Clean-pod policy'),
      hint: trans.__(
        'None keeps every pod and its log; Running stops stragglers when the job ends, a crash-looping replica and its log too.'
      )
    },
    nodeSelector: { label: trans.__('Node selector') },
    tolerations: {
      label: trans.__('Tolerations'),
      choices: { '': trans.__('all effects') }
    },
    labels: { label: trans.__('Labels') },
    annotations: { label: trans.__('Annotations') },
    queue: {
      label: trans.__('Kueue queue'),
      hint: trans.__('LocalQueue name (kueue.x-k8s.io/queue-name).')
    },
    priorityClassName: {
      label: trans.__('Priority class'),
      hint: trans.__(
        'PriorityClass of every pod: lets the job preempt, or be preempted by, others.'
      )
    },
    extras: { label: trans.__('Other manifest fields') }
  } satisfies Record<string, IFieldText>;
}

/**
 * Module-private constants: examples, not prose to translate.
 */
namespace Private {
  /**
   * The example command.
   */
  export const EXAMPLE_COMMAND = 'python train.py --epochs 3';

  /**
   * The example arguments.
   */
  export const EXAMPLE_ARGS = '--epochs 3';

  /**
   * The example log directory.
   */
  export const EXAMPLE_LOGDIR = '/home/jovyan/runs/exp1';
}
