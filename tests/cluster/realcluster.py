"""A real one-node Kubernetes on loopback for the cluster test tier.

Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd and a
kubelet (node ``ptjob-node``), all bound to 127.0.0.1, from what ``cluster/build-*.sh``
built into the cache folder. Nothing here talks to an address outside this machine:
the pod network is a CNI bridge with no gateway, no route out and no masquerade, and
containerd's registry mirror for every host is a closed loopback port.

``python -m tests.cluster.realcluster DIR`` runs one in the foreground until Ctrl-C.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

NODE = "ptjob-node"
PAUSE_IMAGE = "ptjob.local/pause:1"
JOB_IMAGE = "docker.io/pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
BRIDGE = "ptjob0"
POD_SUBNET = "10.244.0.0/24"
ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


class ClusterError(RuntimeError):
    """The cluster did not come up; the message carries the failing component's log."""


def default_cache() -> Path:
    env = os.environ.get("PTJOB_CLUSTER_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "jupyter-pytorchjob" / "cluster"


def built(cache: Path) -> str | None:
    """None when everything the tier needs is built, else what is missing."""
    names = ["kube-apiserver", "kubelet", "kube-scheduler", "kube-controller-manager"]
    missing = [n for n in names if not (cache / "bin" / n).is_file()]
    missing += [n for n in ("pause.tar", "job.tar") if not (cache / "images" / n).is_file()]
    if missing:
        return f"not built in {cache}: {', '.join(missing)} (run `make cluster`)"
    for tool in ("etcd", "containerd", "runc", "ctr"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (run `make cluster`)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Component:
    name: str
    process: subprocess.Popen[bytes]
    log: Path


@dataclass
class RealCluster:
    """One cluster: its processes, its ports, its kubeconfigs. ``start`` then ``stop``."""

    workdir: Path
    cache: Path = field(default_factory=default_cache)
    components: list[Component] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workdir = self.workdir.resolve()
        self.ports = {
            n: free_port() for n in ("etcd", "etcd-peer", "apiserver", "kubelet", "kubelet-healthz")
        }
        self.ports.update({n: free_port() for n in ("scheduler", "controller-manager")})
        self.sock = self.workdir / "containerd.sock"

    # -- public -------------------------------------------------------------------

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports['apiserver']}"

    def kubeconfig(self, user: str = "admin") -> Path:
        return self.workdir / f"{user}.kubeconfig"

    def start(self) -> None:
        problem = built(self.cache)
        if problem:
            raise ClusterError(problem)
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "logs").mkdir(exist_ok=True)
        self._credentials()
        self._start_etcd()
        self._start_apiserver()
        self._start_containerd()
        self._import_images()
        self._start("kube-controller-manager", self._controller_manager_args())
        self._start("kube-scheduler", self._scheduler_args())
        self._start_kubelet()
        self._wait(self._node_ready, 120, "kubelet", "node ptjob-node Ready")
        self.install_crds()
        state = {"ports": self.ports, "tokens": self.tokens, "cache": str(self.cache)}
        (self.workdir / "cluster.json").write_text(json.dumps(state))
        (self.workdir / "READY").write_text(self.server + "\n")

    @classmethod
    def attach(cls, workdir: Path) -> RealCluster:
        """A handle on a cluster another process runs in ``workdir`` (no ``stop``)."""
        state = json.loads((workdir / "cluster.json").read_text())
        cluster = cls(workdir, cache=Path(state["cache"]))
        cluster.ports, cluster.tokens = state["ports"], state["tokens"]
        return cluster

    def stop(self) -> None:
        """Stop every pod, then every process; unmount and remove what the run made."""
        (self.workdir / "READY").unlink(missing_ok=True)
        if self._alive("kubelet") and self._alive("kube-apiserver"):
            self._drain_pods()
        for component in reversed(self.components):
            if component.name != "containerd":
                _terminate(component.process)
        self._remove_containers()
        for component in self.components:
            _terminate(component.process)
        self.components.clear()
        _unmount_under(self.workdir)
        _unmount_under(self.cache / "containerd-root")
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True, check=False)

    def stop_component(self, name: str) -> None:
        """Stop one component (a test's 'dead kubelet'); ``stop`` still cleans up."""
        for component in self.components:
            if component.name == name:
                _terminate(component.process)

    def request(self, method: str, path: str, body: object = None, user: str = "admin") -> dict:
        """One JSON request to the API server as ``user``; raises urllib's HTTPError."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.tokens[user]}")
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, context=self._tls(), timeout=30) as resp:
            return json.loads(resp.read() or b"{}")

    def install_crds(self, names: tuple[str, ...] = ("kubeflow.org_pytorchjobs.yaml",)) -> None:
        """POST the real CRDs from ../shared/crds (kubectl 1.32 would refuse their CEL
        rules client-side against a 1.20 server; the 1.20 server drops them)."""
        import yaml  # the project's dependency; imported late so `down` needs nothing

        for name in names:
            crd = yaml.safe_load((SHARED / "crds" / name).read_text())
            try:
                self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            except urllib.error.HTTPError as e:
                if e.code != 409:
                    raise ClusterError(f"CRD {name}: {e.code} {e.read()[:300]!r}") from e
            plural = crd["spec"]["names"]["plural"]
            group = crd["spec"]["group"]
            full_name = f"{plural}.{group}"
            self._wait(
                lambda: self._crd_established(full_name),  # noqa: B023 (called at once)
                60,
                "kube-apiserver",
                f"CRD {name}",
            )

    def uninstall_crd(self, full_name: str) -> None:
        try:
            self.request(
                "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{full_name}"
            )
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise

    # -- processes ------------------------------------------------------------------

    def _start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> Component:
        log = self.workdir / "logs" / f"{name}.log"
        process = subprocess.Popen(
            args,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        component = Component(name, process, log)
        self.components.append(component)
        return component

    def _alive(self, name: str) -> bool:
        return any(c.name == name and c.process.poll() is None for c in self.components)

    def _wait(self, ready: Callable[[], bool], timeout: float, component: str, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for c in self.components:
                if c.process.poll() is not None and c.name != "ctr":
                    raise ClusterError(f"{c.name} exited {c.process.returncode}:\n{_tail(c.log)}")
            try:
                if ready():
                    return
            except (OSError, urllib.error.URLError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        log = self.workdir / "logs" / f"{component}.log"
        raise ClusterError(f"{what}: not ready after {timeout:.0f} s\n{_tail(log)}")

    def _credentials(self) -> None:
        tokens = self.workdir / "tokens.csv"
        for user in ("admin", "alice"):
            self.tokens[user] = base64.b32encode(os.urandom(20)).decode().lower()
        groups = {"admin": "system:masters", "alice": "ptjob:users"}
        tokens.write_text("".join(f'{t},{u},{u},"{groups[u]}"\n' for u, t in self.tokens.items()))
        tokens.chmod(0o600)
        key = self.workdir / "sa.key"
        if not key.exists():
            subprocess.run(
                ["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True
            )
            subprocess.run(
                [
                    "openssl",
                    "rsa",
                    "-in",
                    str(key),
                    "-pubout",
                    "-out",
                    str(self.workdir / "sa.pub"),
                ],
                check=True,
                capture_output=True,
            )

    def _write_kubeconfigs(self) -> None:
        ca = base64.b64encode((self.workdir / "certs" / "apiserver.crt").read_bytes()).decode()
        for user, token in self.tokens.items():
            config = {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "ptjob",
                        "cluster": {"server": self.server, "certificate-authority-data": ca},
                    }
                ],
                "users": [{"name": user, "user": {"token": token}}],
                "contexts": [
                    {
                        "name": user,
                        "context": {"cluster": "ptjob", "user": user, "namespace": "default"},
                    }
                ],
                "current-context": user,
            }
            path = self.kubeconfig(user)
            path.write_text(json.dumps(config, indent=1))
            path.chmod(0o600)

    def _tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.workdir / "certs" / "apiserver.crt"))

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.ports['etcd-peer']}"
        client = f"http://127.0.0.1:{self.ports['etcd']}"
        self._start(
            "etcd",
            [
                "etcd",
                "--name=ptjob",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=ptjob={peer}",
                "--unsafe-no-fsync",
            ],
        )
        self._wait(lambda: _http_ok(client + "/health"), 30, "etcd", "etcd")

    def _start_apiserver(self) -> None:
        w = self.workdir
        self._start(
            "kube-apiserver",
            [
                str(self.cache / "bin" / "kube-apiserver"),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.ports['apiserver']}",
                "--insecure-port=0",
                f"--cert-dir={w / 'certs'}",
                f"--etcd-servers=http://127.0.0.1:{self.ports['etcd']}",
                f"--token-auth-file={w / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--allow-privileged=true",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={w / 'sa.pub'}",
                f"--service-account-signing-key-file={w / 'sa.key'}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount",
                "--endpoint-reconciler-type=none",
                "--kubelet-preferred-address-types=InternalIP",
            ],
        )
        self._wait(
            lambda: (w / "certs" / "apiserver.crt").exists(), 60, "kube-apiserver", "serving cert"
        )
        self._write_kubeconfigs()
        self._wait(
            lambda: self._get_text("/readyz") == "ok", 120, "kube-apiserver", "API server /readyz"
        )

    def _start_containerd(self) -> None:
        w = self.workdir
        cni = w / "cni"
        cni.mkdir(exist_ok=True)
        (cni / "10-ptjob.conflist").write_text(
            json.dumps(
                {
                    "cniVersion": "0.4.0",
                    "name": "ptjob",
                    "plugins": [
                        {
                            # No gateway, no routes, no masquerade: pods reach each other
                            # on the bridge and nothing else.
                            "type": "bridge",
                            "bridge": BRIDGE,
                            "isGateway": False,
                            "ipMasq": False,
                            "hairpinMode": True,
                            "ipam": {
                                "type": "host-local",
                                "ranges": [[{"subnet": POD_SUBNET}]],
                                "dataDir": str(w / "cni-ipam"),
                            },
                        }
                    ],
                }
            )
        )
        root = self.cache / "containerd-root"
        config = w / "containerd.toml"
        config.write_text(
            f"""version = 2
root = "{root}"
state = "{w / "containerd-state"}"
[grpc]
  address = "{self.sock}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."*"]
    endpoint = ["http://127.0.0.1:9"]
"""
        )
        self._start("containerd", ["containerd", f"--config={config}"])
        self._wait(lambda: self._ctr("version").returncode == 0, 30, "containerd", "containerd")

    def _ctr(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ctr", f"--address={self.sock}", "-n", "k8s.io", *args],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    def _import_images(self) -> None:
        have = set(self._ctr("images", "ls", "-q").stdout.split())
        for ref, tar in ((PAUSE_IMAGE, "pause.tar"), (JOB_IMAGE, "job.tar")):
            stamp = self.cache / "images" / f"{tar}.imported"
            fresh = (
                stamp.exists()
                and stamp.stat().st_mtime >= (self.cache / "images" / tar).stat().st_mtime
            )
            if ref in have and fresh:
                continue
            done = self._ctr("images", "import", str(self.cache / "images" / tar))
            if done.returncode != 0:
                raise ClusterError(f"ctr images import {tar}: {done.stderr[-2000:]}")
            stamp.touch()

    def _admin_kubeconfig_args(self) -> list[str]:
        return [f"--kubeconfig={self.kubeconfig('admin')}"]

    def _controller_manager_args(self) -> list[str]:
        return [
            str(self.cache / "bin" / "kube-controller-manager"),
            *self._admin_kubeconfig_args(),
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.ports['controller-manager']}",
            "--port=0",
            f"--service-account-private-key-file={self.workdir / 'sa.key'}",
            f"--root-ca-file={self.workdir / 'certs' / 'apiserver.crt'}",
            "--use-service-account-credentials=false",
            # Node IPAM needs a cluster CIDR the bridge already owns; the rest run.
            "--controllers=*,-nodeipam,-csrsigning,-bootstrapsigner,-tokencleaner",
        ]

    def _scheduler_args(self) -> list[str]:
        return [
            str(self.cache / "bin" / "kube-scheduler"),
            *self._admin_kubeconfig_args(),
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.ports['scheduler']}",
            "--port=0",
        ]

    def _start_kubelet(self) -> None:
        w = self.workdir
        config = w / "kubelet.yaml"
        config.write_text(
            json.dumps(
                {
                    "apiVersion": "kubelet.config.k8s.io/v1beta1",
                    "kind": "KubeletConfiguration",
                    "address": "127.0.0.1",
                    "port": self.ports["kubelet"],
                    "healthzBindAddress": "127.0.0.1",
                    "healthzPort": self.ports["kubelet-healthz"],
                    "readOnlyPort": 0,
                    # Loopback only: the API server's log proxy is the one client.
                    "authentication": {
                        "anonymous": {"enabled": True},
                        "webhook": {"enabled": False},
                    },
                    "authorization": {"mode": "AlwaysAllow"},
                    "cgroupDriver": "cgroupfs",
                    "failSwapOn": False,
                    "cgroupsPerQOS": False,
                    "enforceNodeAllocatable": [],
                    "evictionHard": {
                        "memory.available": "1Mi",
                        "nodefs.available": "1%",
                        "imagefs.available": "1%",
                        "nodefs.inodesFree": "1%",
                    },
                    "imageGCHighThresholdPercent": 100,
                    "imageGCLowThresholdPercent": 99,
                    "clusterDNS": [],
                    "serializeImagePulls": False,
                }
            )
        )
        self._start(
            "kubelet",
            [
                str(self.cache / "bin" / "kubelet"),
                f"--config={config}",
                *self._admin_kubeconfig_args(),
                f"--root-dir={w / 'kubelet'}",
                "--container-runtime=remote",
                f"--container-runtime-endpoint=unix://{self.sock}",
                f"--hostname-override={NODE}",
                "--node-ip=127.0.0.1",
                f"--pod-infra-container-image={PAUSE_IMAGE}",
            ],
            env={"PTJOB_KUBELET_LOOPBACK_NODE_IP": "1"},
        )

    # -- probes ---------------------------------------------------------------------

    def _get_text(self, path: str) -> str:
        req = urllib.request.Request(self.server + path)
        req.add_header("Authorization", f"Bearer {self.tokens['admin']}")
        with urllib.request.urlopen(req, context=self._tls(), timeout=5) as resp:
            return resp.read().decode()

    def _node_ready(self) -> bool:
        node = self.request("GET", f"/api/v1/nodes/{NODE}")
        conditions = (node.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def _crd_established(self, name: str) -> bool:
        crd = self.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        conditions = (crd.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    # -- teardown -------------------------------------------------------------------

    def _drain_pods(self) -> None:
        """Force-delete every pod so the kubelet stops its containers and tears down
        their sandboxes (and their network namespaces) itself."""
        try:
            pods = self.request("GET", "/api/v1/pods")["items"]
            for pod in pods:
                meta = pod["metadata"]
                path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
                with contextlib.suppress(urllib.error.HTTPError):
                    self.request("DELETE", path, {"gracePeriodSeconds": 0})
        except (OSError, urllib.error.URLError):
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not self._ctr("tasks", "ls", "-q").stdout.split():
                return
            time.sleep(0.5)

    def _remove_containers(self) -> None:
        if not self.sock.exists():
            return
        try:
            for task in self._ctr("tasks", "ls", "-q").stdout.split():
                self._ctr("tasks", "kill", "-a", "-s", "SIGKILL", task)
            for container in self._ctr("containers", "ls", "-q").stdout.split():
                self._ctr("tasks", "delete", "-f", container)
                self._ctr("containers", "delete", container)
        except subprocess.TimeoutExpired:
            pass


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)
    except ProcessLookupError:
        pass


def _unmount_under(folder: Path) -> None:
    prefix = str(folder.resolve()) + "/"
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True, check=False)


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as resp:
        return bool(resp.status == 200)


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def main() -> None:
    """Run a cluster in the foreground until SIGTERM or Ctrl-C, then stop it cleanly."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workdir", type=Path)
    args = parser.parse_args()
    cluster = RealCluster(args.workdir)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        cluster.start()
        print(f"up: {cluster.server}, admin kubeconfig {cluster.kubeconfig()}", flush=True)
        while True:
            time.sleep(3600)
    except ClusterError as e:
        print(f"cluster: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
