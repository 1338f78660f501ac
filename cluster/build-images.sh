#!/usr/bin/env bash
# Build the cluster test tier's two images from registry packages only, as docker
# archives that cluster/realcluster.py imports into containerd:
#   pause.tar  the pod sandbox (cluster/pause.c, built static)
#   job.tar    Debian bookworm (debootstrap) + torch==2.13.0 CPU from PyPI, tagged as
#              the project's default job image so jobs run unchanged.
set -euo pipefail

cache=${PTJOB_CLUSTER_CACHE:-$HOME/.cache/jupyter-pytorchjob/cluster}
here=$(cd "$(dirname "$0")" && pwd)
out=$cache/images
stamp=$(cat "$0" "$here/pause.c" "$here/pack_image.py" | sha256sum | cut -c1-12)
job_ref=${PTJOB_CLUSTER_JOB_IMAGE:-docker.io/pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime}
pause_ref=ptjob.local/pause:1
log() { echo "[build-images $(date +%T)] $*"; }

if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$out/job.tar" ] && [ -f "$out/pause.tar" ]; then
  echo "images: cached in $out"
  exit 0
fi
mkdir -p "$out"
bash "$here/install-packages.sh"

log "pause image"
rm -rf "$out/pause-root" && mkdir -p "$out/pause-root"
gcc -static -O2 -o "$out/pause-root/pause" "$here/pause.c"
python3 "$here/pack_image.py" "$out/pause-root" "$pause_ref" "$out/pause.tar" --cmd /pause

rootfs=$out/job-root
if [ ! -f "$rootfs/.debootstrapped" ]; then
  log "debootstrap bookworm"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=python3 bookworm "$rootfs" http://deb.debian.org/debian >"$out/debootstrap.log" 2>&1 ||
    { tail -20 "$out/debootstrap.log"; exit 1; }
  touch "$rootfs/.debootstrapped"
fi
log "torch==2.13.0 into the image"
rm -rf "$rootfs/opt/ptjob-site"
# The host's Python is 3.11 like bookworm's, so its pip installs the same cp311 wheels.
python3 -m pip install -q --no-compile --target "$rootfs/opt/ptjob-site" torch==2.13.0 numpy
ln -sf python3 "$rootfs/usr/bin/python"
rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
log "pack job image"
python3 "$here/pack_image.py" "$rootfs" "$job_ref" "$out/job.tar" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env PYTHONPATH=/opt/ptjob-site --cmd python3
echo "$stamp" >"$out/.stamp"
log "done: $(du -sh "$out/job.tar" | cut -f1) job image"
