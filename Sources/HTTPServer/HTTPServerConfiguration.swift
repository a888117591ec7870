private import Threads

/// How an ``HTTPServer`` listens and how much it accepts from each client.
///
/// Every value is checked by ``HTTPServer/start()``, which throws ``HTTPServerError/Code/invalidConfiguration``
/// naming the first field that is out of range.
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on: an IPv4 or IPv6 literal (`"127.0.0.1"` or `"::1"`, loopback only; `"0.0.0.0"` or
    /// `"::"`, every interface) or a host name, resolved when the server starts (its first address is used).
    public var host: String
    /// The TCP port to listen on; `0` lets the kernel pick a free one, reported by ``HTTPServer/port``.
    public var port: UInt16
    /// How many threads serve connections (libmicrohttpd's thread pool); at least 1 and at most
    /// ``maximumConnections``.
    public var threads: Int
    /// How many connections are open at once at most. A connection beyond it is answered at once with 503
    /// (`{"error":{"code":"server_busy",…}}`) and closed, rather than left waiting in the kernel's backlog. At least 1.
    public var maximumConnections: Int
    /// How many of those connections one client may hold at once; its next one is answered with 503
    /// (`too_many_connections`) and closed. A client is a source address: an IPv4 address, or an IPv6 /64 (what
    /// one host is usually given). Behind a proxy every connection comes from the proxy. At least 1.
    public var maximumConnectionsPerClient: Int
    /// How long a connection may stay idle (nothing received or sent) before it is closed. At least 1.
    public var connectionTimeoutSeconds: Int
    /// How long a client has to send a request's whole head (request line and header fields), counted from the
    /// moment the server is ready for it (the connection accepted, or the previous response sent), however
    /// steadily bytes arrive: a client sending one byte at a time cannot hold a connection longer. A head that
    /// has begun is answered with 408; a connection that sent nothing is closed. At least 1.
    public var requestHeaderTimeoutSeconds: Int
    /// How long a client has to send a request's whole body, counted from the end of its head, however steadily
    /// bytes arrive; past it the connection is closed. At least 1.
    public var requestBodyTimeoutSeconds: Int
    /// The largest request body accepted, in bytes; larger bodies are answered with 413 and never buffered.
    /// At least 0.
    public var maximumBodyBytes: Int
    /// How long ``HTTPServer/stop()`` waits for requests already being handled to finish sending their responses
    /// before closing their connections. At least 0.
    public var shutdownGracePeriodSeconds: Int
    /// How many threads run the work of answers that wait rather than compute (``HTTPAnswer/waiting(_:)``): so
    /// many of them can wait at once while ``threads`` serve every other connection. At least 1.
    public var waitingThreads: Int

    /// Creates a configuration; the defaults listen on loopback on an ephemeral port with one thread per active
    /// processor, 256 connections of which 64 per client, a 30-second idle timeout, 10 seconds for a request's head
    /// and 30 for its body, a 1 MiB body limit, a 10-second shutdown grace and 64 threads for waiting handlers.
    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        threads: Int = HTTPServerConfiguration.activeProcessorCount,
        maximumConnections: Int = 256,
        maximumConnectionsPerClient: Int = 64,
        connectionTimeoutSeconds: Int = 30,
        requestHeaderTimeoutSeconds: Int = 10,
        requestBodyTimeoutSeconds: Int = 30,
        maximumBodyBytes: Int = 1 << 20,
        shutdownGracePeriodSeconds: Int = 10,
        waitingThreads: Int = 64
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.requestHeaderTimeoutSeconds = requestHeaderTimeoutSeconds
        self.requestBodyTimeoutSeconds = requestBodyTimeoutSeconds
        self.maximumBodyBytes = maximumBodyBytes
        self.shutdownGracePeriodSeconds = shutdownGracePeriodSeconds
        self.waitingThreads = waitingThreads
    }

    /// The number of processors available to this process (``AvailableCPUs``), the default thread count.
    @usableFromInline
    static var activeProcessorCount: Int { AvailableCPUs.count }

    /// Throws ``HTTPServerError/Code/invalidConfiguration`` for the first field outside its documented range.
    func validate() throws(HTTPServerError) {
        let limit = Int(Int32.max)
        try Self.check(threads, in: 1...1024, field: "threads")
        try Self.check(maximumConnections, in: 1...limit, field: "maximumConnections")
        guard threads <= maximumConnections else {
            throw HTTPServerError(
                .invalidConfiguration,
                "maximumConnections (\(maximumConnections)) must be at least threads (\(threads))"
            )
        }
        try Self.check(maximumConnectionsPerClient, in: 1...limit, field: "maximumConnectionsPerClient")
        try Self.check(connectionTimeoutSeconds, in: 1...limit, field: "connectionTimeoutSeconds")
        try Self.check(requestHeaderTimeoutSeconds, in: 1...limit, field: "requestHeaderTimeoutSeconds")
        try Self.check(requestBodyTimeoutSeconds, in: 1...limit, field: "requestBodyTimeoutSeconds")
        try Self.check(maximumBodyBytes, in: 0...limit, field: "maximumBodyBytes")
        try Self.check(shutdownGracePeriodSeconds, in: 0...limit, field: "shutdownGracePeriodSeconds")
        try Self.check(waitingThreads, in: 1...1024, field: "waitingThreads")
    }

    private static func check(_ value: Int, in range: ClosedRange<Int>, field: String) throws(HTTPServerError) {
        guard range.contains(value) else {
            throw HTTPServerError(
                .invalidConfiguration,
                "\(field) is \(value), but must be in \(range.lowerBound)...\(range.upperBound)"
            )
        }
    }
}
