private import CReceiptMicroHTTPD
private import Glibc
private import Synchronization
internal import Threads

/// What the daemons' callbacks share: the application's handler, the limits, the connection table and the
/// in-flight count a graceful stop waits on. One per server; ``RunningServer`` keeps it alive until every daemon
/// has stopped.
final class ServerContext: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPAnswer
    /// Where the work of ``HTTPAnswer/waiting(_:)`` answers runs, their connections suspended meanwhile.
    let waitingPool: WaitingWorkPool
    /// The responses of connections set aside (suspended) that are still to come.
    let pendingAnswers = PendingAnswers()
    let maximumBodyBytes: Int
    let headerTimeout: Int64
    let bodyTimeout: Int64
    let table: ConnectionTable
    let inFlight = InFlightRequests()
    /// One per daemon, by index: the logger's argument.
    let errorAnswers: [MicroHTTPDErrorAnswers]

    /// Throws when the system cannot make the waiting pool's threads.
    init(
        handler: @escaping @Sendable (HTTPRequest) -> HTTPAnswer, configuration: HTTPServerConfiguration,
        table: ConnectionTable
    ) throws(ThreadStartError) {
        self.handler = handler
        waitingPool = try WaitingWorkPool(threads: configuration.waitingThreads)
        self.maximumBodyBytes = configuration.maximumBodyBytes
        self.headerTimeout = Int64(configuration.requestHeaderTimeoutSeconds) * 1_000_000_000
        self.bodyTimeout = Int64(configuration.requestBodyTimeoutSeconds) * 1_000_000_000
        self.table = table
        errorAnswers = (0..<configuration.threads).map {
            MicroHTTPDErrorAnswers(table: table, daemonIndex: $0, maximumBodyBytes: configuration.maximumBodyBytes)
        }
    }
}

/// The started libmicrohttpd daemons, each with one thread and no listening socket of its own, and the gate
/// that accepts connections and hands them to the daemons. Its holder must call ``stop(gracePeriodSeconds:)``
/// exactly once.
///
/// `@unchecked Sendable`: the daemon handles are only used through libmicrohttpd calls that are safe from any
/// thread (`MHD_add_connection`, `MHD_stop_daemon` once, after the gate has stopped).
final class RunningServer: @unchecked Sendable {
    private let daemons: [OpaquePointer]
    private let context: ServerContext
    private var gate: ConnectionGate?
    /// The port the listening socket is bound to.
    let port: UInt16

    private init(daemons: [OpaquePointer], context: ServerContext, port: UInt16) {
        self.daemons = daemons
        self.context = context
        self.port = port
    }

    /// Opens libmicrohttpd, which `receipt` does not load until it serves; throws
    /// ``HTTPServerError/Code/daemonStartFailed`` with the reason when it cannot be opened.
    static func openLibrary() throws(HTTPServerError) {
        if let failure = CReceiptMHD_open() {
            throw HTTPServerError(
                .daemonStartFailed,
                "libmicrohttpd could not be opened (install libmicrohttpd12): \(String(cString: failure))")
        }
    }

    /// Starts one daemon per configured thread and the gate over `socket`, which this takes over whatever the
    /// outcome; throws ``HTTPServerError/Code/daemonStartFailed`` when libmicrohttpd or the gate cannot start.
    static func start(
        listeningOn socket: ListenSocket, configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPAnswer
    ) throws(HTTPServerError) -> RunningServer {
        let table = ConnectionTable(
            maximumConnections: configuration.maximumConnections,
            maximumPerClient: configuration.maximumConnectionsPerClient, daemons: configuration.threads)
        let context: ServerContext
        do {
            context = try ServerContext(handler: handler, configuration: configuration, table: table)
        } catch {
            close(socket.descriptor)
            throw HTTPServerError(.daemonStartFailed, "the waiting threads could not start: \(error)")
        }
        var daemons: [OpaquePointer] = []
        for index in 0..<configuration.threads {
            guard let daemon = startDaemon(configuration, context, index: index) else { break }
            daemons.append(daemon)
        }
        let server = RunningServer(daemons: daemons, context: context, port: socket.port)
        let endpoint = ListenAddress(host: configuration.host, port: socket.port)
        guard daemons.count == configuration.threads else {
            close(socket.descriptor)
            server.stopDaemons()
            throw HTTPServerError(
                .daemonStartFailed,
                "libmicrohttpd could not start serving \(endpoint) with \(configuration.threads) threads")
        }
        let handles = DaemonHandles(daemons)
        server.gate = ConnectionGate.start(
            listenDescriptor: socket.descriptor, configuration: configuration, table: table
        ) { record in
            handles.add(record)
        }
        guard server.gate != nil else {
            server.stopDaemons()
            throw HTTPServerError(.daemonStartFailed, "the connection gate for \(endpoint) could not start")
        }
        return server
    }

    /// Closes the listening socket (new connections are refused) and the connections whose first head was still
    /// being read, waits up to `gracePeriodSeconds` for the requests the application has already seen to finish
    /// sending their responses, then lets the waiting handlers still running end and waits for every response
    /// still to come (libmicrohttpd must not stop with a connection suspended), then closes every remaining
    /// connection and stops the daemons, joining their threads.
    ///
    /// The daemons close the remaining connections themselves before they are stopped (waiting at most two
    /// seconds for that): libmicrohttpd 0.9.75, stopped while refusing a request (a malformed `Content-Length` on
    /// a kept-alive connection), queues no answer, then reads the answer it did not queue, and crashes.
    func stop(gracePeriodSeconds: Int) {
        gate?.stop()
        gate = nil
        context.inFlight.drain(waitingAtMost: gracePeriodSeconds)
        stopDaemons()
    }

    private func stopDaemons() {
        context.waitingPool.finish()
        context.pendingAnswers.waitForAll()
        context.table.closeAllStarted(waitingAtMost: 2_000_000_000)
        for daemon in daemons {
            MHD_stop_daemon(daemon)
        }
    }
}

/// The daemons' handles, for the gate's thread to hand connections to.
private final class DaemonHandles: @unchecked Sendable {
    private let handles: [OpaquePointer]

    init(_ handles: [OpaquePointer]) {
        self.handles = handles
    }

    /// Gives `record`'s socket to the daemon it names, which from then on closes it, whether or not it takes it.
    func add(_ record: ServedConnection) -> Bool {
        var address = record.address
        let length = socklen_t(
            Int32(address.ss_family) == AF_INET6
                ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                MHD_add_connection(handles[record.daemonIndex], record.descriptor, $0, length) == .YES
            }
        }
    }
}

/// One daemon with its own thread, fed by ``ConnectionGate`` through `MHD_add_connection`.
///
/// - `STRICT_FOR_CLIENT` -1: in libmicrohttpd 0.9.75 it is this level (not 1) that refuses whitespace between a
///   field name and its colon, with one 400 and a close; level 1 adds a `Host` check whose 400 is written twice.
/// - `CONNECTION_LIMIT` twice the server's: the table already enforces the limit, and a daemon still counting a
///   connection it is about to clean up must not refuse (and silently close) one the table admitted.
/// - `URI_LOG_CALLBACK` sees each request's target before libmicrohttpd parses it (``requestStarted``).
/// - `USE_ERROR_LOG` with `EXTERNAL_LOGGER`: the log announces libmicrohttpd's own error answers, which
///   ``MicroHTTPDErrorAnswers`` replaces with the server's.
private func startDaemon(
    _ configuration: HTTPServerConfiguration, _ context: ServerContext, index: Int
) -> OpaquePointer? {
    let flags =
        MHD_USE_POLL.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        | MHD_USE_NO_LISTEN_SOCKET.rawValue | MHD_USE_ERROR_LOG.rawValue
    let contextPointer = Unmanaged.passUnretained(context).toOpaque()
    let errorAnswersPointer = Unmanaged.passUnretained(context.errorAnswers[index]).toOpaque()
    let completed: MHD_RequestCompletedCallback = requestCompleted
    let notified: MHD_NotifyConnectionCallback = connectionNotified
    let started:
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? =
            requestStarted
    let unescape: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int =
        keepPercentEscapes
    let options: [CVarArg] = [
        MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(clamping: configuration.maximumConnections * 2),
        MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(clamping: configuration.connectionTimeoutSeconds),
        MHD_OPTION.STRICT_FOR_CLIENT.rawValue, Int32(-1),
        MHD_OPTION.NOTIFY_COMPLETED.rawValue, unsafeBitCast(completed, to: OpaquePointer.self),
        OpaquePointer(contextPointer),
        MHD_OPTION.NOTIFY_CONNECTION.rawValue, unsafeBitCast(notified, to: OpaquePointer.self),
        OpaquePointer(contextPointer),
        MHD_OPTION.URI_LOG_CALLBACK.rawValue, unsafeBitCast(started, to: OpaquePointer.self),
        OpaquePointer(contextPointer),
        MHD_OPTION.UNESCAPE_CALLBACK.rawValue, unsafeBitCast(unescape, to: OpaquePointer.self),
        OpaquePointer(contextPointer),
        MHD_OPTION.EXTERNAL_LOGGER.rawValue, MicroHTTPDErrorAnswers.logger,
        OpaquePointer(errorAnswersPointer),
        MHD_OPTION.END.rawValue,
    ]
    return withVaList(options) { arguments in
        MHD_start_daemon_va(flags, 0, nil, nil, handleAccess, contextPointer, arguments)
    }
}

/// The connection libmicrohttpd's "started" notification attached to `connection`.
private func servedConnection(_ connection: OpaquePointer) -> ServedConnection? {
    CReceiptMHD_socketContext(connection).map { Unmanaged<ServedConnection>.fromOpaque($0).takeUnretainedValue() }
}

/// libmicrohttpd's connection notifications: at the start, the table's record for the socket becomes the
/// connection's socket context (retained); at the end, it is released and uncounted (and the spare end of a socket
/// pair put in place of the client's socket is closed), before libmicrohttpd closes the socket.
private func connectionNotified(
    _ contextPointer: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_ConnectionNotificationCode
) {
    guard let contextPointer, let connection, let socketContext else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        if let record = context.table.claim(descriptor: CReceiptMHD_connectionDescriptor(connection)) {
            record.handle = connection
            socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
        }
    default:
        if let pointer = socketContext.pointee {
            socketContext.pointee = nil
            let record = Unmanaged<ServedConnection>.fromOpaque(pointer).takeRetainedValue()
            if record.spareDescriptor >= 0 { close(record.spareDescriptor) }
            context.table.closed(record)
        }
    }
}

/// libmicrohttpd's URI log callback, called for every request once its request line is in and before its target
/// is parsed: saves the target as sent, and ends libmicrohttpd's copy of it right after the `?`.
///
/// libmicrohttpd 0.9.75 stores every query argument in the connection's memory pool (32 KiB); a few hundred
/// arguments exhaust it, and the connection is closed without an answer. The server decodes the query itself from
/// the saved target (strictly, ``PercentDecoding``), so libmicrohttpd is left an empty query. The bytes written to
/// are libmicrohttpd's own read buffer, which it also writes to while parsing.
private func requestStarted(
    _ contextPointer: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let uri, let connection, let served = servedConnection(connection) else { return nil }
    let length = strlen(uri)
    let target = UnsafeRawBufferPointer(start: uri, count: length)
    served.target = Array(target)
    served.targetLength = length
    served.headPending = true
    if let question = target.firstIndex(of: UInt8(ascii: "?")), question + 1 < length {
        UnsafeMutablePointer(mutating: uri)[question + 1] = 0
    }
    return nil
}

/// The state of one request between libmicrohttpd's calls of the access handler; only the thread serving its
/// connection touches it.
private final class RequestState {
    /// The request as read from its head; the body is added at the last call.
    var request = HTTPRequest(method: "", path: "/")
    var body: [UInt8] = []
    var exceededLimit = false
    var responded = false
    /// Set when the request's handler was given to the waiting pool: its response, once the handler has returned.
    var waiting: WaitingResponse?
    /// The handler's response, held for the daemon's next turn (see ``sendNextTurn(_:to:_:)``).
    var nextTurn: HTTPResponse?
    private var discardedBytes = 0

    /// Appends a piece of body while it fits in `limit`. Past the limit the body is dropped and further pieces are
    /// discarded, because libmicrohttpd 0.9.75 accepts a response only once the whole body is read; returns false
    /// (close the connection, no answer) once the discarded bytes pass `limit` or 64 KiB, whichever is larger.
    func take(_ chunk: UnsafeRawBufferPointer, limit: Int) -> Bool {
        if !exceededLimit, chunk.count <= limit - body.count {
            body.append(contentsOf: chunk)
            return true
        }
        exceededLimit = true
        body = []
        discardedBytes += chunk.count
        return discardedBytes <= max(limit, 1 << 16)
    }
}

/// libmicrohttpd's access handler: called once when the head is in, once per piece of body, once more (with no
/// data) when the request is complete, and again (with no data) each time its connection is resumed: in the next
/// turn for a response held by ``sendNextTurn(_:to:_:)``, or once a set-aside answer is given.
private func handleAccess(
    _ contextPointer: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let contextPointer, let connection, let uploadDataSize, let requestSlot else {
        return .NO
    }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()
    guard let statePointer = requestSlot.pointee else {
        let state = RequestState()
        requestSlot.pointee = Unmanaged.passRetained(state).toOpaque()
        context.inFlight.begin()
        let served = servedConnection(connection)
        served?.deadline.store(monotonicNanoseconds() + context.bodyTimeout, ordering: .relaxed)
        served?.headPending = false
        do throws(RequestRejection) {
            guard let method, let url, let version, let served else {
                throw RequestRejection(400, "invalid_request_line", "the request line could not be read")
            }
            state.request = try readHead(
                connection, method: method, url: url, version: version, served: served,
                maximumBodyBytes: context.maximumBodyBytes)
        } catch {
            state.exceededLimit = error.status == 413
            return respond(error.response, to: connection, state, context)
        }
        return .YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()
    if let uploadData, uploadDataSize.pointee > 0 {
        let chunk = UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee)
        uploadDataSize.pointee = 0
        return state.take(chunk, limit: context.maximumBodyBytes) ? .YES : .NO
    }
    if state.responded {
        return .YES
    }
    servedConnection(connection)?.deadline.store(0, ordering: .relaxed)
    if state.exceededLimit {
        return respond(bodyTooLarge(limit: context.maximumBodyBytes).response, to: connection, state, context)
    }
    if let response = state.nextTurn {
        state.nextTurn = nil
        return respond(response, to: connection, state, context)
    }
    if let waiting = state.waiting {
        // Called again once the connection is resumed, the handler's response there.
        guard let make = waiting.response.withLock({ $0 }) else { return .YES }
        return respond(make(), to: connection, state, context)
    }
    var request = state.request
    request.body = state.body
    state.body = []
    switch context.handler(request) {
    case .response(let response):
        return sendNextTurn(response, to: connection, state)
    case .later(let start):
        start(setAside(connection, state, context))
    case .waiting(let work):
        let responder = setAside(connection, state, context)
        context.waitingPool.submit { give(work(), to: responder) }
    }
    return .YES
}

/// Holds `response` for the daemon's next turn rather than queuing it in this one, so that the answers of the
/// requests one turn reads go out together after all of them.
///
/// A response queued in the call that completes a request read in one piece, libmicrohttpd sends at once, before it
/// reads the next ready connection: every answer wakes its client, and where clients share the server's cores (a
/// load generator, a co-located backend or proxy), the client's woken thread preempts the daemon's after each
/// request. Suspended and resumed at once, the connection is called again in the daemon's next turn, which queues
/// the response held here, and libmicrohttpd writes it when it next polls the socket writable, with the turn's
/// other answers: a client wakes once for several. Under wrk with 16 connections on two cores (`.ci/bench-server`,
/// four alternating pairs of runs, AMD EPYC) the server was preempted 0.50-0.54 times a request instead of 0.76 and
/// took 56-73 us of CPU a request instead of 64-75, wrk 15-19 instead of 22-26: 0.39-0.49 of raw RSA instead of
/// 0.34-0.38, p99 2.4-3.1 ms instead of 3.9-4.2. With one connection, nothing to gather, the rate was the same.
private func sendNextTurn(_ response: HTTPResponse, to connection: OpaquePointer, _ state: RequestState) -> MHD_Result {
    state.nextTurn = response
    MHD_suspend_connection(connection)
    MHD_resume_connection(connection)
    return .YES
}

/// Gives `answer` to `responder`: its response, or the responder itself to the function that responds later; a
/// waiting answer's work runs here, on the thread already set aside for waiting.
private func give(_ answer: HTTPAnswer, to responder: HTTPResponder) {
    switch answer {
    case .response(let response): responder.respond(response)
    case .later(let start): start(responder)
    case .waiting(let work): give(work(), to: responder)
    }
}

/// Suspends `connection` until its response is given to the responder returned, from any thread; the access
/// handler, called again once the connection is resumed, sends it.
private func setAside(_ connection: OpaquePointer, _ state: RequestState, _ context: ServerContext) -> HTTPResponder {
    let waiting = WaitingResponse()
    state.waiting = waiting
    MHD_suspend_connection(connection)
    let suspended = SuspendedConnection(handle: connection)
    return context.pendingAnswers.responder { make in
        waiting.response.withLock { $0 = make }
        MHD_resume_connection(suspended.handle)
    }
}

/// How the response of a request whose connection is set aside is made, set before its connection is resumed;
/// the daemon's thread makes it when it sends it.
private final class WaitingResponse: Sendable {
    let response = Mutex<HTTPResponder.Making?>(nil)
}

/// A connection suspended while its request's handler runs on another thread; libmicrohttpd's
/// `MHD_resume_connection` may be called from any thread (the daemons run with `MHD_ALLOW_SUSPEND_RESUME`).
private struct SuspendedConnection: @unchecked Sendable {
    let handle: OpaquePointer
}

/// The request's head as libmicrohttpd parsed it, held to ``RequestRules`` like a first head read by the gate.
///
/// libmicrohttpd parses the head in place, turning each line's CRLF, the colon after each field name and the
/// spaces of the request line into NUL bytes, and cuts a line, a value or the target at a NUL it receives: a value
/// `a\0b` reaches the handler as `a`, a bare LF splits a line in two. Every such trick leaves bytes that no parsed
/// part accounts for, so the head is checked to be exactly its parts in order: method, target, version, then each
/// field's name, colon, optional whitespace and value, each line two bytes of line end, and the empty line.
private func readHead(
    _ connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
    version: UnsafePointer<CChar>, served: ServedConnection, maximumBodyBytes: Int
) throws(RequestRejection) -> HTTPRequest {
    let headSize = CReceiptMHD_requestHeaderSize(connection)
    guard headSize <= RequestRules.maximumHeadBytes else {
        throw RequestRejection(
            431, "headers_too_large", "the request head exceeds \(RequestRules.maximumHeadBytes) bytes")
    }
    let fields = rawFields(of: connection)
    let head = UnsafeRawBufferPointer(start: method, count: headSize)
    guard
        headAccountsForEveryByte(
            head, method: method, url: url, targetLength: served.targetLength, version: version, fields: fields)
    else {
        throw RequestRejection(
            400, "invalid_header", "the request head holds a NUL byte, a bare LF or a folded line")
    }
    let methodBytes = Array(UnsafeRawBufferPointer(start: method, count: strlen(method)))
    let versionBytes = Array(UnsafeRawBufferPointer(start: version, count: strlen(version)))
    try RequestRules.checkRequestLine(method: methodBytes, target: served.target, version: versionBytes)
    for field in fields {
        try RequestRules.checkField(name: field.name, value: field.value)
    }
    let trimmedFields = fields.map { (name: $0.name, value: RequestRules.trimmed($0.value)) }
    try RequestRules.checkFraming(version: versionBytes, fields: trimmedFields, maximumBodyBytes: maximumBodyBytes)
    let question = served.target.firstIndex(of: UInt8(ascii: "?"))
    guard
        let query = PercentDecoding.queryArguments(
            served.target[(question.map { $0 + 1 } ?? served.target.endIndex)...])
    else {
        throw RequestRejection(
            400, "invalid_query", "a query argument has a malformed percent-escape or is not UTF-8 once decoded")
    }
    return HTTPRequest(
        method: String(decoding: methodBytes, as: UTF8.self),
        path: String(decoding: served.target[..<(question ?? served.target.endIndex)], as: UTF8.self),
        query: query,
        // The names are tokens (checked above), so lowercasing folds ASCII letters only.
        headers: trimmedFields.map {
            (
                name: String(decoding: $0.name, as: UTF8.self).lowercased(),
                value: String(decoding: $0.value, as: UTF8.self)
            )
        }
    )
}

/// Whether `head` (the head's bytes as libmicrohttpd left them) is exactly method, target, version and `fields`
/// in order, with nothing between them but what libmicrohttpd turned into NUL bytes and optional whitespace.
private func headAccountsForEveryByte(
    _ head: UnsafeRawBufferPointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, targetLength: Int,
    version: UnsafePointer<CChar>, fields: [(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)]
) -> Bool {
    guard let base = head.baseAddress else { return false }
    func offset(_ pointer: UnsafeRawPointer?) -> Int? {
        guard let pointer, pointer >= base, pointer <= base + head.count else { return nil }
        return pointer - base
    }
    func isNul(_ index: Int, count: Int = 1) -> Bool {
        index >= 0 && index + count <= head.count && head[index..<(index + count)].allSatisfy { $0 == 0 }
    }
    let methodLength = strlen(method)
    guard let urlOffset = offset(url), urlOffset == methodLength + 1, isNul(methodLength),
        let versionOffset = offset(version), versionOffset == urlOffset + targetLength + 1,
        isNul(versionOffset - 1)
    else {
        return false
    }
    var position = versionOffset + strlen(version)
    guard isNul(position, count: 2) else { return false }
    position += 2
    for field in fields {
        guard offset(field.name.baseAddress) == position else { return false }
        position += field.name.count
        guard isNul(position) else { return false }
        position += 1
        guard let valueOffset = offset(field.value.baseAddress), valueOffset >= position,
            valueOffset + field.value.count <= head.count,
            head[position..<valueOffset].allSatisfy(RequestRules.isWhitespace)
        else {
            return false
        }
        position = valueOffset + field.value.count
        guard isNul(position, count: 2) else { return false }
        position += 2
    }
    return isNul(position, count: 2) && position + 2 == head.count
}

/// Queues `response` (or a 500 when libmicrohttpd will not take it as it is) and frees libmicrohttpd's copy.
private func respond(
    _ response: HTTPResponse, to connection: OpaquePointer, _ state: RequestState, _ context: ServerContext
) -> MHD_Result {
    let closing = context.inFlight.isDraining
    guard
        let prepared = prepareResponse(response, closing: closing)
            ?? prepareResponse(
                internalError("the handler's response has an invalid status or header"), closing: closing)
    else {
        return .NO
    }
    defer { MHD_destroy_response(prepared.handle) }
    let queued = MHD_queue_response(connection, prepared.status, prepared.handle)
    if queued == .YES {
        state.responded = true
    }
    return queued
}

/// A libmicrohttpd response holding a copy of `response`'s body and headers, or nil when the status is outside
/// 200...599 or libmicrohttpd refuses a header. `Content-Length` is left to libmicrohttpd.
private func prepareResponse(_ response: HTTPResponse, closing: Bool) -> (handle: OpaquePointer, status: UInt32)? {
    guard (200...599).contains(response.status), let status = UInt32(exactly: response.status) else {
        return nil
    }
    let created = response.body.withUnsafeBytes { body in
        MHD_create_response_from_buffer(
            body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let handle = created else {
        return nil
    }
    // The headers in order, but a Content-Length (libmicrohttpd writes the body's); then Connection: close when
    // closing and the response names no Connection of its own.
    var namesConnection = false
    for header in response.headers where !RequestRules.nameMatches(header.name, lowercaseName: "content-length") {
        namesConnection = namesConnection || RequestRules.nameMatches(header.name, lowercaseName: "connection")
        guard MHD_add_response_header(handle, header.name, header.value) == .YES else {
            MHD_destroy_response(handle)
            return nil
        }
    }
    if closing && !namesConnection
        && MHD_add_response_header(handle, MHD_HTTP_HEADER_CONNECTION, "close") != .YES
    {
        MHD_destroy_response(handle)
        return nil
    }
    return (handle, status)
}

/// The request's header fields in the order received, as libmicrohttpd's buffers (valid until the request ends).
private func rawFields(of connection: OpaquePointer) -> [(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)]
{
    let collector = FieldCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values_n(
            connection, .HEADER_KIND, collectField, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.fields
}

private final class FieldCollector {
    var fields: [(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)] = []

    /// Room for a usual request's fields from the start, so that collecting them allocates once.
    init() {
        fields.reserveCapacity(16)
    }
}

private func collectField(
    _ collectorPointer: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ name: UnsafePointer<CChar>?, _ nameSize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let collectorPointer, let name else {
        return .YES
    }
    let collector = Unmanaged<FieldCollector>.fromOpaque(collectorPointer).takeUnretainedValue()
    collector.fields.append(
        (
            name: UnsafeRawBufferPointer(start: name, count: nameSize),
            value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize)
        )
    )
    return .YES
}

/// libmicrohttpd's notification that it is done with a request (response sent, client gone, timeout or shutdown):
/// releases the request's state and counts it out of the in-flight requests. When the response was sent and the
/// connection stays open, the time allowed for the next request's head starts.
private func requestCompleted(
    _ contextPointer: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let contextPointer else {
        return
    }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()
    if let connection, let served = servedConnection(connection) {
        served.headPending = false
        if reason == .REQUEST_TERMINATED_COMPLETED_OK {
            served.deadline.store(monotonicNanoseconds() + context.headerTimeout, ordering: .relaxed)
        }
    }
    guard let requestSlot, let statePointer = requestSlot.pointee else {
        return
    }
    requestSlot.pointee = nil
    Unmanaged<RequestState>.fromOpaque(statePointer).release()
    context.inFlight.end()
}

/// Leaves the path and query exactly as sent: the path's percent-decoding is the handler's business, the query's is
/// done by ``PercentDecoding``.
private func keepPercentEscapes(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ text: UnsafeMutablePointer<CChar>?
) -> Int {
    guard let text else {
        return 0
    }
    return strlen(text)
}
