#!/usr/bin/env bash
# Debian's packages the cluster tier needs: the runtime (etcd, containerd, runc, the CNI
# plugins), what builds it (dpkg-dev for the source package, Debian's reflect2 1.0.2 —
# the vendored 1.0.1 crashes under Go >= 1.18 once a CRD exists), and what builds the
# images (debootstrap, a static libc for the pause program). Installed once, up front,
# so the two builds can then run side by side without sharing apt's lock.
set -euo pipefail
need=(etcd-server containerd runc containernetworking-plugins iproute2 openssl dpkg-dev
  golang-github-modern-go-reflect2-dev debootstrap gcc libc6-dev)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[install-packages] apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
