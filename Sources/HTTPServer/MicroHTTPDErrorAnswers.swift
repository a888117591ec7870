private import CReceiptMicroHTTPD
internal import Glibc

/// The server's own answer in place of the one libmicrohttpd 0.9.75 writes itself when it refuses a request whose
/// head it has read, before calling the access handler: a malformed `Content-Length` (`-1`, `+2`, `0x2`, `2, 2`)
/// or one past 64 bits. On a new connection ``ConnectionGate`` refuses those first; on a kept-alive connection's
/// later request libmicrohttpd reads the head, and writes its status line and headers twice, so the client would
/// read the second copy as the body of the first.
///
/// libmicrohttpd announces each answer of its own in its log before building it, on the thread of the daemon
/// serving the connection; ``answer(status:message:)`` then writes the server's JSON answer
/// (``RequestRejection/wireBytes``, a few hundred bytes, into a socket whose previous response libmicrohttpd has
/// finished handing to the kernel), shuts the socket for writing, and puts one end of a socket pair in its place
/// under libmicrohttpd's descriptor, so that libmicrohttpd's copy goes into the pair and it closes the connection as
/// after any answer. The client reads exactly one response, then the end of the stream.
///
/// The log line does not name the connection. It is the one of this daemon that libmicrohttpd considers past its
/// head, with no response queued, whose request libmicrohttpd has begun (its URI log callback ran) but neither
/// handed to the application nor ended: libmicrohttpd finishes a head and calls the access handler in one step, so
/// no other connection of the daemon is ever in that state. When there is not exactly one, libmicrohttpd's answer
/// stands (so it does for refusals it makes while still reading a head, which leave the connection looking like
/// any other mid-head, and for a malformed chunked body, which it answers once).
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
        let refusing = table.started(byDaemon: daemonIndex).filter { connection in
            guard connection.headPending, let handle = connection.handle else { return false }
            return CReceiptMHD_isPastHead(handle) && CReceiptMHD_queuedStatus(handle) == 0
        }
        guard refusing.count == 1 else { return }
        let refused = refusing[0]
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return
        }
        let bytes = Self.rejection(status: status, message: message, maximumBodyBytes: maximumBodyBytes).wireBytes
        _ = bytes.withUnsafeBytes { send(refused.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(refused.descriptor, Int32(SHUT_WR))
        // libmicrohttpd's descriptor now names one end of the pair, which closes the client's socket; the other end
        // stays open until libmicrohttpd closes the connection, so its own answer is sent into the pair and dropped
        // like any other (a send that failed would take libmicrohttpd 0.9.75 down a path that crashes it).
        dup2(pair[0], refused.descriptor)
        close(pair[0])
        refused.spareDescriptor = pair[1]
    }

    /// The server's answer for a refusal libmicrohttpd announced with `status` and its HTML `message`.
    static func rejection(status: Int, message: String, maximumBodyBytes: Int) -> RequestRejection {
        switch status {
        case 400 where message.contains("Content-Length"):
            RequestRejection(400, "invalid_content_length", "the Content-Length is not a decimal number")
        case 413:
            bodyTooLarge(limit: maximumBodyBytes)
        default:
            RequestRejection((400...599).contains(status) ? status : 400, "invalid_request", "the request is malformed")
        }
    }
}
