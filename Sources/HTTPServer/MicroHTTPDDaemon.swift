private import CReceiptMicroHTTPD
private import Glibc

/// What the daemon's callbacks share: the application's handler, the body limit and the in-flight count a graceful
/// stop waits on. One per daemon; ``RunningDaemon`` keeps it alive until the daemon has stopped.
final class ServerContext: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let maximumBodyBytes: Int
    let inFlight = InFlightRequests()

    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, maximumBodyBytes: Int) {
        self.handler = handler
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// A started libmicrohttpd daemon and the context its callbacks use. Its holder must call ``stop(gracePeriodSeconds:)``
/// exactly once.
struct RunningDaemon {
    private let handle: OpaquePointer
    private let context: ServerContext
    /// The port the daemon's listening socket is bound to.
    let port: UInt16

    /// Starts a daemon serving `socket`, which it takes over whatever the outcome; throws
    /// ``HTTPServerError/Code/daemonStartFailed`` when libmicrohttpd refuses.
    ///
    /// libmicrohttpd receives a duplicate of the descriptor, so that this function can close its own copy on every
    /// path without ever closing a descriptor twice, whether or not libmicrohttpd closes its copy when it fails.
    static func start(
        listeningOn socket: ListenSocket, configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) -> RunningDaemon {
        let context = ServerContext(handler: handler, maximumBodyBytes: configuration.maximumBodyBytes)
        let daemonDescriptor = fcntl(socket.descriptor, F_DUPFD_CLOEXEC, 0)
        let handle = daemonDescriptor < 0 ? nil : startDaemon(on: daemonDescriptor, configuration, context)
        guard let handle else {
            shutdown(socket.descriptor, Int32(SHUT_RDWR))
            close(socket.descriptor)
            let endpoint = ListenAddress(host: configuration.host, port: socket.port)
            throw HTTPServerError(
                .daemonStartFailed,
                "libmicrohttpd could not start serving \(endpoint) with \(configuration.threads) threads"
            )
        }
        close(socket.descriptor)
        return RunningDaemon(handle: handle, context: context, port: socket.port)
    }

    /// Closes the listening socket (new connections are refused), waits up to `gracePeriodSeconds` for the requests
    /// the application has already seen to finish sending their responses, then stops the daemon, closing every
    /// remaining connection and joining its threads.
    func stop(gracePeriodSeconds: Int) {
        let listenDescriptor = MHD_quiesce_daemon(handle)
        if listenDescriptor >= 0 {
            close(listenDescriptor)
        }
        context.inFlight.drain(waitingAtMost: gracePeriodSeconds)
        MHD_stop_daemon(handle)
    }
}

private func startDaemon(
    on descriptor: Int32, _ configuration: HTTPServerConfiguration, _ context: ServerContext
) -> OpaquePointer? {
    let flags = MHD_USE_POLL.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_ITC.rawValue
    let contextPointer = Unmanaged.passUnretained(context).toOpaque()
    let completed: MHD_RequestCompletedCallback = requestCompleted
    let unescape: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int =
        keepPercentEscapes
    let options: [CVarArg] = [
        MHD_OPTION.LISTEN_SOCKET.rawValue, descriptor,
        MHD_OPTION.THREAD_POOL_SIZE.rawValue, UInt32(clamping: configuration.threads),
        MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(clamping: configuration.maximumConnections),
        MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(clamping: configuration.connectionTimeoutSeconds),
        MHD_OPTION.NOTIFY_COMPLETED.rawValue, unsafeBitCast(completed, to: OpaquePointer.self),
        OpaquePointer(contextPointer),
        MHD_OPTION.UNESCAPE_CALLBACK.rawValue, unsafeBitCast(unescape, to: OpaquePointer.self),
        OpaquePointer(contextPointer),
        MHD_OPTION.END.rawValue,
    ]
    return withVaList(options) { arguments in
        MHD_start_daemon_va(flags, 0, nil, nil, handleAccess, contextPointer, arguments)
    }
}

/// The state of one request between libmicrohttpd's calls of the access handler; only the thread serving its
/// connection touches it.
private final class RequestState {
    var body: [UInt8] = []
    var exceededLimit = false
    var responded = false
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

/// libmicrohttpd's access handler: called once when the headers are in, once per piece of body, and once more
/// (with no data) when the request is complete.
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
        guard declaredBodyFits(connection, limit: context.maximumBodyBytes) else {
            state.exceededLimit = true
            return respond(bodyTooLarge(limit: context.maximumBodyBytes), to: connection, state, context)
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
    if state.exceededLimit {
        return respond(bodyTooLarge(limit: context.maximumBodyBytes), to: connection, state, context)
    }
    let request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: values(of: connection, kind: .GET_ARGUMENT_KIND).map {
            (name: formDecoded($0.name), value: formDecoded($0.value))
        },
        headers: values(of: connection, kind: .HEADER_KIND).map {
            (
                name: String(decoding: $0.name, as: UTF8.self).lowercased(),
                value: String(decoding: $0.value, as: UTF8.self)
            )
        },
        body: state.body
    )
    state.body = []
    return respond(context.handler(request), to: connection, state, context)
}

/// Whether the request's `Content-Length`, when it has one, is within `limit`.
private func declaredBodyFits(_ connection: OpaquePointer, limit: Int) -> Bool {
    guard let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) else {
        return true
    }
    let digits = String(cString: declared)
    guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
        return true
    }
    guard let length = Int(digits) else {
        return false
    }
    return length <= limit
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
    var headers = response.headers.filter { $0.name.lowercased() != "content-length" }
    if closing {
        headers.append((name: MHD_HTTP_HEADER_CONNECTION, value: "close"))
    }
    for header in headers where MHD_add_response_header(handle, header.name, header.value) != .YES {
        MHD_destroy_response(handle)
        return nil
    }
    return (handle, status)
}

/// The name/value pairs of one kind (headers, query arguments) in the order received, as raw bytes.
private func values(of connection: OpaquePointer, kind: MHD_ValueKind) -> [(name: [UInt8], value: [UInt8])] {
    let collector = PairCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values_n(connection, kind, collectPair, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.pairs
}

private final class PairCollector {
    var pairs: [(name: [UInt8], value: [UInt8])] = []
}

private func collectPair(
    _ collectorPointer: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ name: UnsafePointer<CChar>?, _ nameSize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let collectorPointer, let name else {
        return .YES
    }
    let collector = Unmanaged<PairCollector>.fromOpaque(collectorPointer).takeUnretainedValue()
    collector.pairs.append(
        (
            name: Array(UnsafeRawBufferPointer(start: name, count: nameSize)),
            value: value.map { Array(UnsafeRawBufferPointer(start: $0, count: valueSize)) } ?? []
        )
    )
    return .YES
}

/// libmicrohttpd's notification that it is done with a request (response sent, client gone, timeout or shutdown):
/// releases the request's state and counts it out of the in-flight requests.
private func requestCompleted(
    _ contextPointer: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let contextPointer, let requestSlot, let statePointer = requestSlot.pointee else {
        return
    }
    requestSlot.pointee = nil
    Unmanaged<RequestState>.fromOpaque(statePointer).release()
    Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue().inFlight.end()
}

/// Leaves the path and query exactly as sent: the path's percent-decoding is the handler's business, the query's is
/// done by ``formDecoded(_:)``.
private func keepPercentEscapes(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ text: UnsafeMutablePointer<CChar>?
) -> Int {
    guard let text else {
        return 0
    }
    return strlen(text)
}
