internal import Synchronization

/// A small HTTP/1.1 server: it reads each request completely (body within
/// ``HTTPServerConfiguration/maximumBodyBytes``), hands it to one handler, and sends back the handler's response.
///
/// Connections are served by libmicrohttpd's thread pool, so the handler runs on several threads at once. The
/// server answers on its own, without calling the handler: 400 for malformed requests, 413 with
/// `{"error":{"code":"body_too_large",…}}` for bodies over the limit (checked against `Content-Length` before any
/// body is read, and while reading a chunked body, which is then discarded rather than kept), and 500 with
/// `{"error":{"code":"internal_error",…}}` when the handler's response has a status outside 200...599 or a header
/// libmicrohttpd refuses.
public final class HTTPServer: Sendable {
    private let configuration: HTTPServerConfiguration
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let daemon = Mutex<RunningDaemon?>(nil)

    /// Creates a stopped server; nothing is bound until ``start()``.
    ///
    /// - Parameter handler: called once per complete request, concurrently from the server's threads; it must not
    ///   call ``stop()``.
    public init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.configuration = configuration
        self.handler = handler
    }

    /// Validates the configuration, binds and listens; on return the server is accepting connections on ``port``.
    ///
    /// Throws ``HTTPServerError/Code/invalidConfiguration`` naming the field out of range,
    /// ``HTTPServerError/Code/bindFailed`` with the system's reason (such as "Address already in use"),
    /// ``HTTPServerError/Code/alreadyStarted`` when running, or ``HTTPServerError/Code/daemonStartFailed``.
    /// A server that was stopped can be started again.
    public func start() throws(HTTPServerError) {
        try daemon.withLock { (running: inout RunningDaemon?) throws(HTTPServerError) in
            guard running == nil else {
                throw HTTPServerError(.alreadyStarted, "the server is already listening on port \(running?.port ?? 0)")
            }
            try configuration.validate()
            let socket = try ListenSocket.open(ListenAddress(host: configuration.host, port: configuration.port))
            running = try RunningDaemon.start(listeningOn: socket, configuration: configuration, handler: handler)
        }
    }

    /// The port the server is really listening on (the kernel's choice when the configuration asked for 0), or 0
    /// when it is not running.
    public var port: UInt16 {
        daemon.withLock { $0?.port ?? 0 }
    }

    /// Stops gracefully: new connections are refused at once; requests the handler has already been given (or is
    /// reading the body of) get their responses sent, waiting at most
    /// ``HTTPServerConfiguration/shutdownGracePeriodSeconds``; then every connection is closed and the threads end.
    ///
    /// Returns when the server has stopped. Does nothing when it is not running; also called on deinit.
    public func stop() {
        daemon.withLock { running in
            running?.stop(gracePeriodSeconds: configuration.shutdownGracePeriodSeconds)
            running = nil
        }
    }

    deinit {
        stop()
    }
}
