import Foundation
import Synchronization

/// Why the tests could not get a PostgreSQL server.
public struct PostgreSQLTestServerError: Error, CustomStringConvertible {
    public let description: String
}

/// The PostgreSQL server the tests of this process use: a throw-away cluster made with `initdb` in a temporary
/// folder on first use, listening on a Unix socket of its own only (`listen_addresses=''`), stopped and removed when
/// the process exits; or, when the environment variable `RECEIPT_TEST_POSTGRESQL` holds a connection URI, that
/// server. Each test asks for a database of its own (``createDatabase()``), so tests are independent.
///
/// As root the server's commands run as the `postgres` user (`runuser -u postgres --`), since PostgreSQL refuses to
/// run as root. Without PostgreSQL's server programs the tests fail, saying how to install them: they never skip.
public final class PostgreSQLTestServer: Sendable {
    /// The URI of the maintenance database (`postgres`), where databases are created.
    private let adminURI: String
    /// The cluster this process made, nil when the server is the one `RECEIPT_TEST_POSTGRESQL` names.
    private let cluster: Cluster?
    private let psql: String
    private let databases = Atomic<Int>(0)
    /// The shell command that stops and removes the cluster this process made.
    private let cleanup: String?

    deinit {
        guard let cleanup else { return }
        _ = try? Self.run("/bin/sh", ["-c", cleanup])
        clusterCleanups.withLock { $0.removeAll { $0 == cleanup } }
    }

    /// The server of this process, started on first use.
    public static func shared() throws -> PostgreSQLTestServer {
        try sharedServer.withLock { (server) throws -> PostgreSQLTestServer in
            if let server { return server }
            let started = try PostgreSQLTestServer(
                external: ProcessInfo.processInfo.environment["RECEIPT_TEST_POSTGRESQL"])
            server = started
            return started
        }
    }

    /// A cluster of its own for a test that stops and starts its server, which others must not see: made with
    /// `initdb` whatever `RECEIPT_TEST_POSTGRESQL` says, stopped and removed when the value goes away.
    public static func privateCluster() throws -> PostgreSQLTestServer {
        try PostgreSQLTestServer(external: nil)
    }

    private static let sharedServer = Mutex<PostgreSQLTestServer?>(nil)

    /// The folder of the cluster this process made and the programs that run it.
    private struct Cluster: Sendable {
        let folder: String
        let binaries: String
        var data: String { folder + "/data" }
        var socket: String { folder + "/socket" }
        var log: String { folder + "/server.log" }
    }

    private init(external: String?) throws {
        if let uri = external, !uri.isEmpty {
            adminURI = uri
            cluster = nil
            cleanup = nil
            psql = try Self.program("psql", in: Self.binaryFolder(required: false))
            return
        }
        let binaries = try Self.binaryFolder(required: true) ?? ""
        psql = try Self.program("psql", in: binaries)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "receipt-tests-postgresql-\(getpid())-\(UUID().uuidString.prefix(8))"
        ).path
        let cluster = Cluster(folder: folder, binaries: binaries)
        try FileManager.default.createDirectory(atPath: cluster.socket, withIntermediateDirectories: true)
        if getuid() == 0 {
            try Self.run("/bin/chown", ["-R", "postgres:postgres", folder])
        }
        cleanup = Self.removeAtExit(cluster)
        try Self.runAsServerUser(
            cluster.binaries + "/initdb",
            ["-D", cluster.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
        self.cluster = cluster
        adminURI = "postgresql:///postgres?host=\(cluster.socket)&user=postgres"
        try start()
    }

    /// Where `initdb`, `pg_ctl` and `psql` are: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin.
    private static func binaryFolder(required: Bool) throws -> String? {
        var candidates: [String] = []
        if let bindir = try? output("/bin/sh", ["-c", "pg_config --bindir 2>/dev/null"]) {
            candidates.append(bindir.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            candidates.append("/usr/lib/postgresql/\(version)/bin")
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) {
            return found
        }
        guard required else { return nil }
        throw PostgreSQLTestServerError(
            description: "PostgreSQL's server programs (initdb, pg_ctl) were not found through `pg_config --bindir` "
                + "or in /usr/lib/postgresql/*/bin. Install them with `.ci/setup --tests` (Debian package "
                + "postgresql), or set RECEIPT_TEST_POSTGRESQL to the URI of a server the tests may create databases in."
        )
    }

    /// `name` in `folder`, else on PATH.
    private static func program(_ name: String, in folder: String?) throws -> String {
        if let folder, FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") { return "\(folder)/\(name)" }
        let found = try? output("/bin/sh", ["-c", "command -v \(name)"]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let found, !found.isEmpty else {
            throw PostgreSQLTestServerError(
                description: "\(name) was not found; install it with `.ci/setup --tests` (Debian package postgresql)")
        }
        return found
    }

    /// A new, empty database of its own and its URI (`postgresql://…`).
    public func createDatabase() throws -> String {
        let name = "receipt_test_\(getpid())_\(databases.add(1, ordering: .relaxed).newValue)"
        try execute("CREATE DATABASE \(name)")
        if cluster == nil {
            // Another's server keeps nothing of the tests: the database goes when the process exits.
            Self.atExit(
                "'\(psql)' -X -q -d '\(adminURI)' -c 'DROP DATABASE IF EXISTS \(name) WITH (FORCE)' >/dev/null 2>&1")
        }
        return uri(database: name)
    }

    /// The URI of `database` on this server.
    public func uri(database: String) -> String {
        guard let cluster else {
            // Replace the database of the URI given: its path, before any query.
            var components = URLComponents(string: adminURI)
            components?.path = "/" + database
            return components?.string ?? adminURI
        }
        return "postgresql:///\(database)?host=\(cluster.socket)&user=postgres"
    }

    /// Runs `sql` in the maintenance database with psql, failing on the first error.
    public func execute(_ sql: String, database: String? = nil) throws {
        try Self.run(psql, ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database.map(uri) ?? adminURI, "-c", sql])
    }

    /// Whether the server is the throw-away cluster of this process (which tests may stop and start).
    public var isOwnCluster: Bool { cluster != nil }

    /// Stops the cluster of this process at once (`pg_ctl stop -m fast`: connections are cut).
    public func stop() throws {
        let cluster = try ownCluster()
        try Self.runAsServerUser(cluster.binaries + "/pg_ctl", ["-D", cluster.data, "-m", "fast", "-w", "stop"])
    }

    /// Starts the cluster of this process (again), waiting until it accepts connections.
    public func start() throws {
        let cluster = try ownCluster()
        try Self.runAsServerUser(
            cluster.binaries + "/pg_ctl",
            [
                "-D", cluster.data, "-l", cluster.log, "-w", "-t", "60",
                "-o", "-k \(cluster.socket) -c listen_addresses='' -c max_connections=200", "start",
            ])
    }

    private func ownCluster() throws -> Cluster {
        guard let cluster else {
            throw PostgreSQLTestServerError(
                description: "the server is RECEIPT_TEST_POSTGRESQL's, which the tests do not stop or start")
        }
        return cluster
    }

    /// Stops the cluster and removes its folder when the process exits; and, should the process die without
    /// exiting, a watcher that outlives it does the same within a second or two (for at most 6 hours).
    private static func removeAtExit(_ cluster: Cluster) -> String {
        let stop =
            "\(cluster.binaries)/pg_ctl -D '\(cluster.data)' -m immediate -w stop >/dev/null 2>&1; rm -rf '\(cluster.folder)'"
        let asServerUser = getuid() == 0 ? "runuser -u postgres -- /bin/sh -c \"\(stop)\"" : stop
        atExit(asServerUser)
        _ = try? spawn(
            "/bin/sh",
            [
                "-c",
                "i=0; while kill -0 \(getpid()) 2>/dev/null && [ $i -lt 21600 ]; do sleep 1; i=$((i+1)); done; "
                    + "if [ -d '\(cluster.folder)' ]; then \(asServerUser); fi",
            ], output: "/dev/null")
        return asServerUser
    }

    /// Runs the shell command `command` when the process exits.
    private static func atExit(_ command: String) {
        clusterCleanups.withLock { $0.append(command) }
        guard !atExitRegistered.exchange(true, ordering: .relaxed) else { return }
        atexit {
            for command in clusterCleanups.withLock({ $0 }) {
                _ = try? PostgreSQLTestServer.run("/bin/sh", ["-c", command])
            }
        }
    }

    private static func runAsServerUser(_ program: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
        } else {
            try run(program, arguments)
        }
    }

    /// Runs `program` with `arguments`, its output (standard output and error) into a file, and returns that
    /// output once it exited 0; throws with it otherwise. Spawned with `posix_spawn` and reaped with `waitpid`
    /// (Foundation's `Process.waitUntilExit` was seen never to return for `pg_ctl start`).
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent(
            "receipt-tests-postgresql-output-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let pid = try spawn(program, arguments, output: outputPath)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS are macros: exited normally when the low 7 bits are 0, the code above them.
        let exitCode = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard exitCode == 0 else {
            throw PostgreSQLTestServerError(
                description: "\(program) \(arguments.joined(separator: " ")) failed (exit \(exitCode)): \(text)")
        }
        return text
    }

    /// Starts `program` with its standard input from /dev/null and its output appended to the file `output`.
    private static func spawn(_ program: String, _ arguments: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else inherited: a server or watcher holding a pipe of `swift test` open would keep it waiting.
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard status == 0 else {
            throw PostgreSQLTestServerError(description: "could not start \(program): error \(status)")
        }
        return pid
    }

    private static func output(_ program: String, _ arguments: [String]) throws -> String {
        try run(program, arguments)
    }
}

/// The shell commands that stop and remove this process's clusters (and drop its databases on another's server),
/// run at exit.
private let clusterCleanups = Mutex<[String]>([])
private let atExitRegistered = Atomic<Bool>(false)
