"""What the ``ptjob`` CLI, the ``%ptjob`` magic and the Python API share, so that neither
the CLI nor the magic imports the other.

* ``ansi``           - ANSI colour codes kept or stripped in printed logs.
* ``backend_choice`` - which backend a command means, from plain values.
* ``formatting``     - job tables as rows, rendered as text (CLI, plain IPython) or HTML
  (a notebook); durations; log chunks to stdout/stderr.
* ``logs``           - a job's logs as shown, with a failed job's failing run after them.
* ``waiting``        - ``ptjob wait``'s live line: state, bar, percent, ETA, key metric.
* ``server``         - the Jupyter server of this kernel or terminal (TensorBoard through it).
"""
