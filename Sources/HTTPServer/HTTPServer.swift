internal import Synchronization

/// A small HTTP/1.1 server: it reads each request completely (body within
/// ``HTTPServerConfiguration/maximumBodyBytes``), hands it to one handler, and sends back the handler's response.
///
/// Requests are served by libmicrohttpd, one daemon thread per configured thread, so the handler runs on several
/// threads at once. In front of them one gate thread accepts connections: it answers at once with 503 those over
/// ``HTTPServerConfiguration/maximumConnections`` or ``HTTPServerConfiguration/maximumConnectionsPerClient``, and
/// reads each connection's first request head itself, so that a client trickling or withholding its head holds
/// no daemon connection. Every request's head must arrive within
/// ``HTTPServerConfiguration/requestHeaderTimeoutSeconds`` and its body within
/// ``HTTPServerConfiguration/requestBodyTimeoutSeconds``, however steadily bytes arrive.
///
/// The server answers on its own, without calling the handler, with `{"error":{"code":…,"message":…}}` and
/// `Connection: close`, then closes the connection: 400 for a malformed head or a framing that could be read more
/// than one way (both `Content-Length` and `Transfer-Encoding`, either twice, a bad `Content-Length`, a NUL, CR or
/// LF inside a field, whitespace before a colon, `Host` or `Authorization` twice; see `RequestRules`), 501 for a
/// transfer coding other than `chunked`, 400 for a query argument that does not percent-decode to UTF-8, 408 when
/// a head is too slow, 413 for a body over the limit (checked against `Content-Length` before any body is read,
/// and while reading a chunked body, which is then discarded rather than kept), 414 and 431 for a target over
/// 8 KiB or a head over 16 KiB or 100 fields, and 500 with `internal_error` when the handler's response has a
/// status outside 200...599 or a header libmicrohttpd refuses.
public final class HTTPServer: Sendable {
    private let configuration: HTTPServerConfiguration
    private let handler: @Sendable (HTTPRequest) -> HTTPAnswer
    private let daemon = Mutex<RunningServer?>(nil)

    /// Creates a stopped server whose handler responds to each request at once; nothing is bound until
    /// ``start()``. The handler is called once per complete request, concurrently from the server's threads; it
    /// must not call ``stop()``.
    public convenience init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.init(configuration: configuration, answering: { request in .response(handler(request)) })
    }

    /// Creates a stopped server whose handler may also answer a request later (``HTTPAnswer/later(_:)``) or by
    /// waiting on a thread of its own (``HTTPAnswer/waiting(_:)``): the request's connection is then set aside
    /// until the response is given, and a stop waits for it. The handler is called as for
    /// ``init(configuration:handler:)``.
    public init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        answering handler: @escaping @Sendable (HTTPRequest) -> HTTPAnswer
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
        try daemon.withLock { (running: inout RunningServer?) throws(HTTPServerError) in
            guard running == nil else {
                throw HTTPServerError(.alreadyStarted, "the server is already listening on port \(running?.port ?? 0)")
            }
            try configuration.validate()
            try RunningServer.openLibrary()
            let socket = try ListenSocket.open(ListenAddress(host: configuration.host, port: configuration.port))
            running = try RunningServer.start(
                listeningOn: socket, configuration: configuration, handler: handler)
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
