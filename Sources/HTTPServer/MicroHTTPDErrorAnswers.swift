private import CReceiptMicroHTTPD
internal import Glibc

/// The server's own answer in place of the one libmicrohttpd 0.9.75 writes itself when it refuses a request before
/// the access handler is called (a malformed `Content-Length`, a head too large, a bad request line or version) on
/// a connection it already serves, which means a later request of a kept-alive connection: ``ConnectionGate``
/// reads every first head itself.
///
/// For a malformed `Content-Length` (`-1`, `+2`, `0x2`, `2, 2`) libmicrohttpd writes its status line and headers
/// twice, so the client reads the second copy as the body of the first; for the other refusals it answers once, in
/// HTML. It announces each such answer in its log before building it, on the thread of the daemon serving the
/// connection; ``answer(status:message:)`` then writes the server's JSON answer (``RequestRejection/wireBytes``)
/// to that connection and shuts the socket for writing, so that libmicrohttpd's copy cannot be sent and it closes
/// the connection. The client reads exactly one response, then the end of the stream.
///
/// The log line does not name the connection. It is the one of this daemon that libmicrohttpd considers past its
/// head (read, or refused while reading it) with no response queued, among those the application has not seen a
/// head of since their last response: libmicrohttpd finishes a head and calls the access handler in one step, so
/// no other connection of the daemon is ever in that state. A refusal of a body (a malformed chunk) comes while the application holds the
/// request; it is answered when the connection is the daemon's only one with a head in and no response. When the
/// connection is not certain, libmicrohttpd's answer stands.
final class MicroHTTPDErrorAnswers: Sendable {
    private let table: ConnectionTable
    private let daemonIndex: Int
    private let maximumBodyBytes: Int

    init(table: ConnectionTable, daemonIndex: Int, maximumBodyBytes: Int) {
        self.table = table
        self.daemonIndex = daemonIndex
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// libmicrohttpd's logger (`MHD_OPTION_EXTERNAL_LOGGER`); its argument is an instance the daemon's
    /// ``ServerContext`` keeps alive. Every other log line is dropped, as without the logger.
    static var logger: OpaquePointer { unsafeBitCast(logLine, to: OpaquePointer.self) }

    private static let logLine: MHD_LogCallback = { instance, format, arguments in
        var message: UnsafePointer<CChar>?
        guard let instance, let arguments else { return }
        let status = CReceiptMHD_errorAnswerStatus(format, arguments, &message)
        guard status != 0 else { return }
        Unmanaged<MicroHTTPDErrorAnswers>.fromOpaque(instance).takeUnretainedValue().answer(
            status: Int(status), message: message.map { String(cString: $0) } ?? "")
    }

    /// Answers, in place of libmicrohttpd, the connection it is refusing with `status` and the HTML `message`.
    func answer(status: Int, message: String) {
        let refusable = table.started(byDaemon: daemonIndex).filter { connection in
            guard let handle = connection.handle else { return false }
            return CReceiptMHD_isPastHead(handle) && CReceiptMHD_queuedStatus(handle) == 0
        }
        let beforeTheApplication = refusable.filter(\.awaitingHead)
        let refused =
            beforeTheApplication.count == 1
            ? beforeTheApplication[0] : beforeTheApplication.isEmpty && refusable.count == 1 ? refusable[0] : nil
        guard let refused else { return }
        let bytes = Self.rejection(status: status, message: message, maximumBodyBytes: maximumBodyBytes).wireBytes
        _ = bytes.withUnsafeBytes { send(refused.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(refused.descriptor, Int32(SHUT_WR))
    }

    /// The server's answer for a refusal libmicrohttpd announced with `status` and its HTML `message`.
    static func rejection(status: Int, message: String, maximumBodyBytes: Int) -> RequestRejection {
        switch status {
        case 400 where message.contains("Content-Length"):
            RequestRejection(400, "invalid_content_length", "the Content-Length is not a decimal number")
        case 400 where message.contains("chunked"):
            RequestRejection(400, "invalid_chunked_body", "the chunked request body is malformed")
        case 400 where message.contains("Host"):
            RequestRejection(400, "missing_host", "an HTTP/1.1 request must have a Host")
        case 413:
            bodyTooLarge(limit: maximumBodyBytes)
        case 414:
            RequestRejection(414, "uri_too_long", "the request target exceeds \(RequestRules.maximumTargetBytes) bytes")
        case 431:
            RequestRejection(
                431, "headers_too_large", "the request head exceeds \(RequestRules.maximumHeadBytes) bytes")
        case 505:
            RequestRejection(505, "http_version_not_supported", "this server speaks HTTP/1.0 and HTTP/1.1")
        case 400...599:
            RequestRejection(status, "invalid_request", "the request is malformed")
        default:
            RequestRejection(400, "invalid_request", "the request is malformed")
        }
    }
}
