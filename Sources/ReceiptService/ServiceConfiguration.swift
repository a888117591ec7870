import Entitlements
import Glibc
import HTTPServer
import ReceiptCrypto
import ReceiptLedger
import ReceiptSigner
import ReceiptVerifier
import StrictJSON
import Threads

/// A configuration the service refuses to start with: the key path (`limits.max_body_bytes`, empty for the file
/// itself) and the rule it breaks.
public typealias ServiceConfigurationError = JSONFieldError

/// Everything `receipt serve` needs, validated as a whole before anything listens: files are read, keys are
/// matched to certificates, catalogs are parsed.
///
/// The file is JSON; relative paths are resolved against the file's directory. `"ledger"` is a SQLite file, or a
/// PostgreSQL database when it is a libpq URI (`postgresql://…` or `postgres://…`):
/// ```json
/// {
///   "listen": "127.0.0.1:8080",
///   "environment": "Production",
///   "ledger": "ledger.sqlite",
///   "trust": ["certs/apple/AppleIncRootCertificate.cer"],
///   "intermediates": ["certs/apple/AppleITunesStoreCertificationAuthority.cer", "certs/apple/AppleWWDRCA.cer"],
///   "signing": {"key": "signer.key", "certificate": "signer.pem", "chain": ["intermediate.pem"]},
///   "tokens": ["a-long-random-bearer-token"],
///   "verify_requires_token": false,
///   "shared_secret": "…",
///   "catalogs": {"game": "catalog.json"},
///   "console": {"enabled": true, "secure_cookie": false, "session_minutes": 480},
///   "limits": {"max_body_bytes": 1048576, "max_connections": 256, "max_connections_per_client": 64,
///              "connection_timeout_seconds": 30, "header_timeout_seconds": 10, "body_timeout_seconds": 30,
///              "threads": 0, "max_receipt_bytes": 4194304, "max_purchases": 10000, "ledger_connections": 0}
/// }
/// ```
public struct ServiceConfiguration: Sendable {
    /// Which App Store environment this service stands in for; receipts of the other one are answered with
    /// 21007 or 21008, as Apple does.
    public enum Environment: String, CaseIterable, Sendable {
        case production = "Production"
        case sandbox = "Sandbox"

        /// The `receipt_type` of receipts this service issues.
        public var receiptType: String {
            switch self {
            case .production: "Production"
            case .sandbox: "ProductionSandbox"
            }
        }
    }

    /// Shortest bearer token accepted: 128 bits of randomness written in hex.
    public static let minimumTokenLength = 32

    /// The address to listen on (an IPv4 or IPv6 literal, or a host name); loopback unless configured otherwise.
    public var host: String
    /// 0 asks for any free port.
    public var port: UInt16
    public var environment: Environment
    /// Where the ledger is: the SQLite file (created when missing), or a PostgreSQL URI (`postgresql://…` or
    /// `postgres://…`); see ``LedgerLocation``.
    public var ledgerPath: String
    /// The roots receipts must chain to.
    public var trustAnchors: [Certificate]
    /// Issuers that proofs do not carry (iOS 6 receipts carry only their leaf), offered when a chain is built and
    /// used only when they lead to one of the anchors: never trusted themselves.
    public var intermediates: [Certificate] = []
    /// Signs issued receipts and `latest_receipt`; without it the issuing endpoint answers 501.
    public var signer: ReceiptSigner?
    /// Bearer tokens accepted on write and issue endpoints (compared in constant time).
    public var tokens: [String]
    /// Whether `/verifyReceipt` and `/v1/entitlements` also require a token.
    public var verifyRequiresToken: Bool
    /// When set, `/verifyReceipt` requests must carry it as `password` (21004 otherwise).
    public var sharedSecret: String?
    /// Catalogs that `/v1/entitlements` requests can name by id; one that names its `bundle_id` also gives
    /// that app's verifyReceipt answers their `subscription_group_identifier`.
    public var catalogs: [String: Catalog]
    /// Bounds on each receipt verified.
    public var verificationLimits: VerificationLimits
    public var maximumBodyBytes: Int
    public var maximumConnections: Int
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold at once; behind a proxy, the proxy's.
    public var maximumConnectionsPerClient: Int
    public var connectionTimeoutSeconds: Int
    /// Time for a request's whole head, from the connection's start or the previous response, however steady.
    public var headerTimeoutSeconds: Int
    /// Time for a request's whole body, from the end of its head, however steady.
    public var bodyTimeoutSeconds: Int
    /// Worker threads; 0 means one per core.
    public var threads: Int
    /// The most connections a PostgreSQL ledger opens at once; 0 means one per worker thread (so no request waits
    /// for a connection). A SQLite ledger ignores it.
    public var ledgerConnections: Int = 0

    /// ``ledgerConnections``, 0 resolved to the number of worker threads.
    public var effectiveLedgerConnections: Int {
        if ledgerConnections > 0 { return ledgerConnections }
        return threads > 0 ? threads : AvailableCPUs.count
    }

    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 8080,
        environment: Environment,
        ledgerPath: String,
        trustAnchors: [Certificate],
        signer: ReceiptSigner? = nil,
        tokens: [String] = [],
        verifyRequiresToken: Bool = false,
        sharedSecret: String? = nil,
        catalogs: [String: Catalog] = [:],
        verificationLimits: VerificationLimits = VerificationLimits(),
        maximumBodyBytes: Int = 1 << 20,
        maximumConnections: Int = 256,
        maximumConnectionsPerClient: Int = 64,
        connectionTimeoutSeconds: Int = 30,
        headerTimeoutSeconds: Int = 10,
        bodyTimeoutSeconds: Int = 30,
        threads: Int = 0
    ) {
        self.host = host
        self.port = port
        self.environment = environment
        self.ledgerPath = ledgerPath
        self.trustAnchors = trustAnchors
        self.signer = signer
        self.tokens = tokens
        self.verifyRequiresToken = verifyRequiresToken
        self.sharedSecret = sharedSecret
        self.catalogs = catalogs
        self.verificationLimits = verificationLimits
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.bodyTimeoutSeconds = bodyTimeoutSeconds
        self.threads = threads
    }

    /// Where App Store Server Notifications V2 and StoreKit 2 signed transactions are accepted from: the anchors
    /// their chains must end at, and the apps they must be for.
    public struct AppleNotifications: Sendable {
        /// The pinned roots (Apple Root CA - G3 in production).
        public var trustAnchors: [Certificate]
        /// The apps whose notifications and transactions are accepted.
        public var bundleIDs: [String]
        /// Their Apple IDs; required of Production payloads, as Apple's library requires.
        public var appAppleIDs: [Int64]

        /// Notifications and signed transactions chaining to `trustAnchors`, for the apps `bundleIDs` (whose
        /// Apple IDs are `appAppleIDs`).
        public init(trustAnchors: [Certificate], bundleIDs: [String], appAppleIDs: [Int64]) {
            self.trustAnchors = trustAnchors
            self.bundleIDs = bundleIDs
            self.appAppleIDs = appAppleIDs
        }
    }

    /// `apple_notifications`, when configured; without it the notification endpoint and signed transactions are
    /// refused.
    public var appleNotifications: AppleNotifications?

    /// `store_api`, when configured; without it Apple's server API paths answer 404.
    public var storeAPI: StoreAPI?

    /// `console`, when enabled; without it every `/console` path answers 404. The service refuses to start with
    /// it and no ``tokens`` to sign in with.
    public var console: Console?

    /// Every app the service knows of: those of `store_api`, of `apple_notifications` and of the catalogs, each
    /// once, sorted.
    public var knownBundleIDs: [String] {
        var bundleIDs = Set(catalogs.values.compactMap(\.bundleID))
        bundleIDs.formUnion(appleNotifications?.bundleIDs ?? [])
        bundleIDs.formUnion(storeAPI?.apps.map(\.bundleID) ?? [])
        return bundleIDs.sorted()
    }

    /// The catalog that describes the app `bundleID`, if one says so.
    public func catalog(forBundleID bundleID: String) -> Catalog? {
        catalogs.values.first { $0.bundleID == bundleID }
    }

    /// Reads and validates the configuration file at `path`.
    public init(file path: String) throws(ServiceConfigurationError) {
        try self.init(json: Self.read(path, for: ""), baseDirectory: Self.directory(of: path))
    }

    /// The directory relative paths in the configuration file at `path` are resolved against: `path` without its
    /// last component, with repeated slashes written once (`a//b/c.json` is in `a/b`); `/` for a file at the root,
    /// `.` for a bare file name.
    public static func directory(of path: String) -> String {
        let components = path.split(separator: "/")
        let root = path.hasPrefix("/") ? "/" : ""
        guard components.count > 1 else { return root.isEmpty ? "." : root }
        return root + components.dropLast().joined(separator: "/")
    }

    /// Validates a configuration document whose relative paths are relative to `baseDirectory`.
    public init(json text: [UInt8], baseDirectory: String) throws(ServiceConfigurationError) {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: text)
        } catch {
            throw JSONFieldError(path: "", rule: "is not valid JSON: \(error)")
        }
        let reader = try JSONObjectReader(document)
        try reader.rejectUnknownKeys(allowed: [
            "listen", "environment", "ledger", "trust", "intermediates", "signing", "tokens", "verify_requires_token",
            "shared_secret", "catalogs", "limits", "apple_notifications", "store_api", "console",
        ])
        let resolve = { (file: String) in file.hasPrefix("/") ? file : baseDirectory + "/" + file }
        let (host, port) = try Self.listenAddress(reader.string("listen") ?? "127.0.0.1:8080", path: "listen")
        let environmentName = try reader.requiredString("environment")
        guard let environment = Environment(rawValue: environmentName) else {
            throw JSONFieldError(
                path: "environment", rule: "must be Production or Sandbox, found \"\(environmentName)\"")
        }
        self.init(
            host: host, port: port, environment: environment,
            ledgerPath: Self.ledgerLocation(try reader.requiredString("ledger"), resolve: resolve),
            trustAnchors: try Self.anchors(reader, resolve: resolve))
        intermediates = try Self.intermediates(reader, resolve: resolve)
        signer = try Self.signer(reader, resolve: resolve)
        tokens = try Self.tokens(reader)
        verifyRequiresToken = try reader.bool("verify_requires_token") ?? false
        if verifyRequiresToken && tokens.isEmpty {
            throw JSONFieldError(path: "verify_requires_token", rule: "is true but no tokens are configured")
        }
        sharedSecret = try reader.string("shared_secret")
        if sharedSecret?.isEmpty == true {
            throw JSONFieldError(path: "shared_secret", rule: "must not be empty (leave it out to accept any)")
        }
        catalogs = try Self.catalogs(reader, resolve: resolve)
        appleNotifications = try Self.appleNotifications(reader, environment: environment, resolve: resolve)
        storeAPI = try Self.storeAPI(
            reader, signer: signer, trustAnchors: trustAnchors + (appleNotifications?.trustAnchors ?? []),
            catalogs: catalogs, resolve: resolve)
        console = try Self.console(reader)
        try readLimits(reader)
    }

    /// The whole of the file at `path`, which the configuration names at `key`.
    static func read(_ path: String, for key: String) throws(ServiceConfigurationError) -> [UInt8] {
        func failure(_ reason: String) -> ServiceConfigurationError {
            ServiceConfigurationError(path: key, rule: "cannot read \(path): \(reason)")
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else { throw failure("no such file") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw failure(errno == EACCES ? "permission denied" : String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            if count == 0 { return bytes }
            guard count > 0 || errno == EINTR else { throw failure(String(cString: strerror(errno))) }
            bytes += chunk[..<max(count, 0)]
        }
    }

    /// `HOST:PORT`: an IPv4 literal, a host name or a bracketed IPv6 literal.
    private static func listenAddress(_ text: String, path: String) throws(JSONFieldError) -> (String, UInt16) {
        do {
            let address = try ListenAddress(parsing: text)
            return (address.host, address.port)
        } catch {
            throw JSONFieldError(path: path, rule: error.message)
        }
    }

    private static func anchors(_ reader: JSONObjectReader, resolve: (String) -> String) throws(JSONFieldError)
        -> [Certificate]
    {
        guard let paths = try reader.strings("trust"), !paths.isEmpty else {
            throw reader.error("trust", "is required: list at least one root certificate to trust")
        }
        var anchors: [Certificate] = []
        for (index, path) in paths.enumerated() {
            anchors += try certificates(in: path, for: "\(reader.path("trust"))[\(index)]", resolve: resolve)
        }
        return anchors
    }

    /// `intermediates`: certificate authorities that are not roots (a root belongs in `trust`), each file's
    /// certificates in turn.
    private static func intermediates(_ reader: JSONObjectReader, resolve: (String) -> String)
        throws(JSONFieldError) -> [Certificate]
    {
        var intermediates: [Certificate] = []
        for (index, path) in (try reader.strings("intermediates") ?? []).enumerated() {
            let key = "\(reader.path("intermediates"))[\(index)]"
            for certificate in try certificates(in: path, for: key, resolve: resolve) {
                guard certificate.isCertificateAuthority else {
                    throw JSONFieldError(
                        path: key,
                        rule: "\(path): \(certificate.subject) is not a certificate authority (no basicConstraints "
                            + "CA:TRUE), so it issued no receipt signer")
                }
                guard !certificate.isSelfSigned else {
                    throw JSONFieldError(
                        path: key, rule: "\(path): \(certificate.subject) is a root (self-signed): list it in trust")
                }
                intermediates.append(certificate)
            }
        }
        return intermediates
    }

    /// The certificates (PEM or DER) of the file at `path`, named `key` in errors.
    private static func certificates(in path: String, for key: String, resolve: (String) -> String)
        throws(JSONFieldError) -> [Certificate]
    {
        let bytes = try read(resolve(path), for: key)
        do {
            return try Certificate.load(pemOrDER: bytes)
        } catch {
            throw JSONFieldError(path: key, rule: "\(path): \(error)")
        }
    }

    private static func signer(_ reader: JSONObjectReader, resolve: (String) -> String) throws(JSONFieldError)
        -> ReceiptSigner?
    {
        guard let signing = try reader.object("signing") else { return nil }
        try signing.rejectUnknownKeys(allowed: ["key", "certificate", "chain"])
        let key = try read(resolve(signing.requiredString("key")), for: signing.path("key"))
        let certificate = try read(
            resolve(signing.requiredString("certificate")), for: signing.path("certificate"))
        var chain: [[UInt8]] = []
        for (index, path) in (try signing.strings("chain") ?? []).enumerated() {
            chain.append(try read(resolve(path), for: "\(signing.path("chain"))[\(index)]"))
        }
        do {
            return ReceiptSigner(
                credentials: try SigningCredentials(keyFile: key, certificateFile: certificate, chainFiles: chain))
        } catch {
            throw JSONFieldError(path: "signing", rule: "\(error)")
        }
    }

    private static func tokens(_ reader: JSONObjectReader) throws(JSONFieldError) -> [String] {
        let tokens = try reader.strings("tokens") ?? []
        for (index, token) in tokens.enumerated() {
            guard token.utf8.count >= minimumTokenLength, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw JSONFieldError(
                    path: "tokens[\(index)]",
                    rule: "must be at least \(minimumTokenLength) printable ASCII characters without spaces "
                        + "(e.g. openssl rand -hex 32)")
            }
        }
        guard Set(tokens).count == tokens.count else { throw JSONFieldError(path: "tokens", rule: "has duplicates") }
        return tokens
    }

    private static func catalogs(_ reader: JSONObjectReader, resolve: (String) -> String) throws(JSONFieldError)
        -> [String: Catalog]
    {
        guard let catalogs = try reader.object("catalogs") else { return [:] }
        var result: [String: Catalog] = [:]
        var idByBundle: [String: String] = [:]
        for id in catalogs.object.keys {
            let path = try catalogs.requiredString(id)
            let bytes = try read(resolve(path), for: catalogs.path(id))
            let catalog: Catalog
            do {
                catalog = try Catalog(json: bytes)
            } catch {
                throw JSONFieldError(path: catalogs.path(id), rule: "\(path): \(error)")
            }
            if let bundleID = catalog.bundleID {
                if let other = idByBundle[bundleID] {
                    throw JSONFieldError(
                        path: catalogs.path(id),
                        rule: "\(path): bundle_id \"\(bundleID)\" is also the bundle of catalogs.\(other)")
                }
                idByBundle[bundleID] = id
            }
            result[id] = catalog
        }
        return result
    }

    /// `apple_notifications`: `trust` (required), `bundle_ids` (required) and `app_apple_ids` (required when the
    /// service stands in for Production, as Apple's own library requires).
    private static func appleNotifications(
        _ reader: JSONObjectReader, environment: Environment, resolve: (String) -> String
    ) throws(JSONFieldError) -> AppleNotifications? {
        guard let settings = try reader.object("apple_notifications") else { return nil }
        try settings.rejectUnknownKeys(allowed: ["trust", "bundle_ids", "app_apple_ids"])
        let anchors = try Self.anchors(settings, resolve: resolve)
        guard let bundleIDs = try settings.strings("bundle_ids"), !bundleIDs.isEmpty, !bundleIDs.contains("") else {
            throw settings.error("bundle_ids", "is required: list the bundle ids of the apps whose notifications count")
        }
        var appAppleIDs: [Int64] = []
        for (index, value) in (try settings.array("app_apple_ids") ?? []).enumerated() {
            guard case .number(let text) = value, let id = Int64(text), id > 0 else {
                throw JSONFieldError(
                    path: "\(settings.path("app_apple_ids"))[\(index)]",
                    rule: "must be a positive integer (the app's Apple ID)")
            }
            appAppleIDs.append(id)
        }
        if environment == .production && appAppleIDs.isEmpty {
            throw settings.error(
                "app_apple_ids",
                "is required in Production: list the Apple IDs of the apps (App Store Connect, App Information)")
        }
        return AppleNotifications(trustAnchors: anchors, bundleIDs: bundleIDs, appAppleIDs: appAppleIDs)
    }

    /// A PostgreSQL URI as it is; a SQLite path resolved as the configuration's other paths are.
    private static func ledgerLocation(_ text: String, resolve: (String) -> String) -> String {
        LedgerLocation.isPostgreSQL(text) ? text : resolve(text)
    }

    private mutating func readLimits(_ reader: JSONObjectReader) throws(JSONFieldError) {
        guard let limits = try reader.object("limits") else { return }
        try limits.rejectUnknownKeys(allowed: [
            "max_body_bytes", "max_connections", "max_connections_per_client", "connection_timeout_seconds",
            "header_timeout_seconds", "body_timeout_seconds", "threads", "max_receipt_bytes", "max_purchases",
            "ledger_connections",
        ])
        maximumBodyBytes = try limits.integer("max_body_bytes", in: 1024...(256 << 20)) ?? maximumBodyBytes
        maximumConnections = try limits.integer("max_connections", in: 1...65_536) ?? maximumConnections
        maximumConnectionsPerClient =
            try limits.integer("max_connections_per_client", in: 1...65_536) ?? maximumConnectionsPerClient
        connectionTimeoutSeconds =
            try limits.integer("connection_timeout_seconds", in: 1...3600) ?? connectionTimeoutSeconds
        headerTimeoutSeconds = try limits.integer("header_timeout_seconds", in: 1...3600) ?? headerTimeoutSeconds
        bodyTimeoutSeconds = try limits.integer("body_timeout_seconds", in: 1...3600) ?? bodyTimeoutSeconds
        threads = try limits.integer("threads", in: 0...1024) ?? threads
        if threads > maximumConnections {
            throw JSONFieldError(
                path: "limits.threads", rule: "is \(threads), more than limits.max_connections (\(maximumConnections))")
        }
        ledgerConnections = try limits.integer("ledger_connections", in: 0...1024) ?? ledgerConnections
        verificationLimits.maximumInputSize =
            try limits.integer("max_receipt_bytes", in: 1024...(256 << 20)) ?? verificationLimits.maximumInputSize
        verificationLimits.maximumPurchases =
            try limits.integer("max_purchases", in: 1...1_000_000) ?? verificationLimits.maximumPurchases
    }
}
