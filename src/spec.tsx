/**
 * The job view's *Spec* section: what the job runs (command, image, runtime,
 * resources, env, volumes), collapsed by default, with its two copies: the
 * `ptjob submit` line and the manifest's YAML.
 *
 * @packageDocumentation
 */

import { Clipboard } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IJob, IPvcMount } from './tokens';

/**
 * A volume as `--pvc` writes it: `CLAIM:MOUNT[:SUBPATH][:ro]`.
 */
export function describeVolume(mount: IPvcMount): string {
  return [
    mount.claim,
    mount.mountPath,
    ...(mount.subPath ? [mount.subPath] : []),
    ...(mount.readOnly ? ['ro'] : [])
  ].join(':');
}

/**
 * The Spec section of a job read with its body (`GET jobs/{name}`); nothing
 * for a job without one.
 */
export function SpecSection(props: {
  job: IJob;
  trans: TranslationBundle;
  copy?: (text: string) => void;
}): JSX.Element | null {
  const { job, trans } = props;
  const copy = props.copy ?? ((text: string) => Clipboard.copyToSystem(text));
  const spec = job.spec;
  if (!spec) {
    return null;
  }
  const command = [...(spec.command ?? []), ...(spec.args ?? [])].join(' ');
  const env = Object.entries(spec.env ?? {});
  const resources = [
    trans._n('%1 node', '%1 nodes', Number(spec.nodes ?? job.nodes)),
    Number(spec.gpus ?? 0) > 0 &&
      trans._n('%1 GPU per node', '%1 GPUs per node', Number(spec.gpus)),
    spec.cpu && trans.__('CPU %1', spec.cpu),
    spec.memory && trans.__('memory %1', spec.memory),
    spec.shm && trans.__('/dev/shm %1', spec.shm),
    spec.nprocPerNode &&
      trans._n(
        '%1 process per node',
        '%1 processes per node',
        Number(spec.nprocPerNode)
      )
  ].filter(Boolean);
  const row = (label: string, value: React.ReactNode) => (
    <>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </>
  );
  return (
    <details className="jp-PyTorchJobView-spec">
      <summary>
        <h3>{trans.__('Spec')}</h3>
      </summary>
      <div className="jp-PyTorchJobView-specActions">
        <button
          type="button"
          className="jp-mod-styled"
          disabled={!job.submitCommand}
          title={
            job.submitCommand
              ? trans.__('Copy the ptjob submit line that gives this job back')
              : trans.__(
                  'A job shipped as a script has no command line: copy its YAML'
                )
          }
          onClick={() => job.submitCommand && copy(job.submitCommand)}
        >
          {trans.__('Copy as ptjob submit')}
        </button>
        <button
          type="button"
          className="jp-mod-styled"
          disabled={!job.yaml}
          title={trans.__('Copy the manifest as YAML')}
          onClick={() => job.yaml && copy(job.yaml)}
        >
          {trans.__('Copy YAML')}
        </button>
      </div>
      <dl className="jp-PyTorchJobView-facts">
        {spec.script
          ? row(
              trans.__('Script'),
              trans._n(
                'shipped with the job (%1 line)',
                'shipped with the job (%1 lines)',
                spec.script.split('\n').filter(Boolean).length
              )
            )
          : row(trans.__('Command'), <code>{command}</code>)}
        {spec.script &&
          (spec.args ?? []).length > 0 &&
          row(trans.__('Arguments'), <code>{spec.args!.join(' ')}</code>)}
        {row(trans.__('Image'), <code>{spec.image ?? ''}</code>)}
        {spec.runtime && row(trans.__('Runtime'), spec.runtime)}
        {spec.workdir &&
          row(trans.__('Working directory'), <code>{spec.workdir}</code>)}
        {row(trans.__('Resources'), resources.join(' · '))}
        {env.length > 0 &&
          row(
            trans.__('Environment'),
            <ul className="jp-PyTorchJobView-specList">
              {env.map(([key, value]) => (
                <li key={key}>
                  <code>
                    {key}={value}
                  </code>
                </li>
              ))}
            </ul>
          )}
        {(spec.pvc ?? []).length > 0 &&
          row(
            trans.__('Volumes'),
            <ul className="jp-PyTorchJobView-specList">
              {spec.pvc!.map(mount => (
                <li key={mount.mountPath}>
                  <code>{describeVolume(mount)}</code>
                </li>
              ))}
            </ul>
          )}
      </dl>
    </details>
  );
}
