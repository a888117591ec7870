"""What the cluster scripts share: a throw-away PostgreSQL cluster, `receipt serve` instances on fixed loopback
ports, and nginx as their load balancer with the upstream block the README documents. Each process started here
is stopped by its PID; everything listens on loopback or on a Unix socket in the script's temporary folder."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def log(message):
    print(f"{os.path.basename(sys.argv[0])}: {message}", flush=True)


def fail(message):
    log(f"FAILED: {message}")
    raise SystemExit(1)


def receipt_binary(arguments):
    """The `receipt` executable named by the first argument, else the checkout's debug build."""
    if arguments:
        return os.path.abspath(arguments[0])
    folder = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    return os.path.join(folder, "receipt")


def wait_until_listening(process, port, seconds, name):
    """Returns once something accepts on loopback `port`; fails if `process` exits first or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            fail(f"{name} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    fail(f"{name} did not listen on port {port} within {seconds} s")


def stop_process(process, stop_signal, seconds):
    """Sends `stop_signal` to `process` if it runs, and kills it if it has not ended within `seconds`."""
    if process.poll() is not None:
        return
    process.send_signal(stop_signal)
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def postgres_bin():
    try:
        return subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    for version in sorted(os.listdir("/usr/lib/postgresql"), reverse=True) if os.path.isdir("/usr/lib/postgresql") else []:
        candidate = f"/usr/lib/postgresql/{version}/bin"
        if os.path.exists(f"{candidate}/initdb"):
            return candidate
    fail("PostgreSQL's initdb was not found: run .ci/setup --tests (it installs Debian's postgresql)")


class PostgreSQL:
    """A throw-away cluster in `folder`, listening on a Unix socket in it only."""

    def __init__(self, folder):
        self.bin = postgres_bin()
        self.data = os.path.join(folder, "pgdata")
        self.socket_dir = os.path.join(folder, "pgsocket")
        self.log_file = os.path.join(folder, "postgres.log")
        os.makedirs(self.socket_dir)
        self.as_user = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(folder, "postgres")
            shutil.chown(self.socket_dir, "postgres")
        self.run("initdb", "-D", self.data, "-U", "receipts", "--auth=trust", "-E", "UTF8")
        self.start()
        self.run("createdb", "-h", self.socket_dir, "-U", "receipts", "receipts")
        self.uri = f"postgresql:///receipts?host={self.socket_dir}&user=receipts"

    def run(self, tool, *arguments):
        result = subprocess.run(self.as_user + [f"{self.bin}/{tool}", *arguments], capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"{tool} failed: {result.stderr.strip()}")

    def start(self):
        options = f"-k {self.socket_dir} -c listen_addresses='' -c fsync=on -c synchronous_commit=on"
        self.run("pg_ctl", "-D", self.data, "-l", self.log_file, "-o", options, "-w", "start")

    def stop(self):
        subprocess.run(self.as_user + [f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"],
                       capture_output=True)

    def query(self, sql):
        result = subprocess.run(
            self.as_user + [f"{self.bin}/psql", "-h", self.socket_dir, "-U", "receipts", "-d", "receipts",
                            "-At", "-F", "\t", "-c", sql], capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"psql failed: {result.stderr.strip()}")
        return [line.split("\t") for line in result.stdout.splitlines() if line]


class Instance:
    """One `receipt serve` on a fixed loopback port, so that nginx's upstream names it across restarts."""

    def __init__(self, receipt, folder, name, ledger, token, limits=None):
        self.receipt, self.folder, self.name = receipt, folder, name
        self.port = free_port()
        self.config = os.path.join(folder, f"{name}.json")
        with open(self.config, "w") as config:
            json.dump({
                "listen": f"127.0.0.1:{self.port}", "environment": "Production", "ledger": ledger,
                "trust": ["dev/root-ca.pem"],
                "signing": {"key": "dev/receipt-signer.key", "certificate": "dev/receipt-signer.pem",
                            "chain": ["dev/intermediate-ca.pem"]},
                "tokens": [token], "limits": {"max_connections_per_client": 256, **(limits or {})},
            }, config)
        self.process = None
        self.start()

    def start(self):
        self.errors = open(os.path.join(self.folder, f"{self.name}.err"), "a")
        self.process = subprocess.Popen([self.receipt, "serve", "--config", self.config],
                                        stdout=subprocess.DEVNULL, stderr=self.errors)
        wait_until_listening(self.process, self.port, 30, f"{self.name} (see {self.errors.name})")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process:
            stop_process(self.process, signal.SIGTERM, 20)


NGINX_CONFIG = """
worker_processes 2;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {folder}/nginx-body;
    proxy_temp_path {folder}/nginx-proxy;
    fastcgi_temp_path {folder}/nginx-fastcgi;
    uwsgi_temp_path {folder}/nginx-uwsgi;
    scgi_temp_path {folder}/nginx-scgi;
{upstream}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://receipt;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            # Recording is idempotent by transaction id, so a write may go to the next instance when one is down.
            proxy_next_upstream error timeout http_502 http_503 non_idempotent;
            proxy_next_upstream_tries 3;
            proxy_connect_timeout 2s;
            proxy_read_timeout 30s;
        }}
    }}
}}
"""

UPSTREAM = """    upstream receipt {{
{servers}
        keepalive 32;
    }}"""


class Nginx:
    def __init__(self, folder, instances):
        self.folder = folder
        self.port = free_port()
        servers = "\n".join(f"        server 127.0.0.1:{instance.port} max_fails=1 fail_timeout=2s;"
                            for instance in instances)
        path = os.path.join(folder, "nginx.conf")
        with open(path, "w") as config:
            config.write(NGINX_CONFIG.format(folder=folder, port=self.port,
                                             upstream=UPSTREAM.format(servers=servers)))
        self.process = subprocess.Popen(["nginx", "-p", folder, "-c", path, "-g", "daemon off;"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_listening(self.process, self.port, 10, "nginx")

    def stop(self):
        stop_process(self.process, signal.SIGQUIT, 10)


