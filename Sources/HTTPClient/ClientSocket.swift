private import CReceiptSockets
private import Glibc

/// The moment by which a whole request must be done, on the monotonic clock the socket calls wait by.
struct Deadline {
    /// `CLOCK_MONOTONIC` milliseconds.
    fileprivate let milliseconds: Int64
    /// The time allowed, for messages.
    let timeout: Duration

    /// `timeout` from now (a negative timeout is none at all).
    init(after timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        let allowed = max(0, min(seconds, 1 << 40) * 1000 + attoseconds / 1_000_000_000_000_000)
        milliseconds = CReceiptSockets_monotonicMilliseconds() + allowed
        self.timeout = timeout
    }
}

/// A connected TCP socket for one request (the only Swift over the C socket calls), closed when released. Every
/// call returns by the deadline given at connection.
final class ClientSocket: ResponseSource {
    /// `host port N`, for messages.
    let peer: String
    private let descriptor: Int32
    private let deadline: Deadline

    private init(descriptor: Int32, peer: String, deadline: Deadline) {
        self.descriptor = descriptor
        self.peer = peer
        self.deadline = deadline
    }

    deinit {
        close(descriptor)
    }

    /// Resolves `host` and connects to the first of its addresses that accepts, or throws
    /// ``HTTPClientError/Code/connectionFailed`` (resolution, refusal, unreachable) or
    /// ``HTTPClientError/Code/timedOut``.
    static func connect(host: String, port: UInt16, deadline: Deadline) throws(HTTPClientError) -> ClientSocket {
        let peer = "\(host) port \(port)"
        var status = CReceiptSockets_Status()
        let descriptor = CReceiptSockets_connect(host, String(port), deadline.milliseconds, &status)
        guard descriptor >= 0 else {
            let tried = status.addressesTried > 1 ? " (tried \(status.addressesTried) addresses)" : ""
            throw error(
                status, timedOut: "could not connect to \(peer) within \(deadline.timeout)\(tried)",
                failed: "cannot connect to \(peer)\(tried)", resolving: host)
        }
        return ClientSocket(descriptor: descriptor, peer: peer, deadline: deadline)
    }

    /// Sends all of `bytes`, or throws ``HTTPClientError/Code/timedOut``, ``HTTPClientError/Code/noResponse`` (the
    /// peer closed the connection first) or ``HTTPClientError/Code/connectionFailed``.
    func send(_ bytes: [UInt8]) throws(HTTPClientError) {
        let status = bytes.withUnsafeBytes {
            CReceiptSockets_sendAll(descriptor, $0.baseAddress, $0.count, deadline.milliseconds)
        }
        guard status.outcome == .ok else {
            throw Self.error(
                status, timedOut: "could not send the request to \(peer) within \(deadline.timeout)",
                failed: "sending the request to \(peer) failed",
                closed: "\(peer) closed the connection while the request was being sent")
        }
    }

    func receive(maximum: Int) throws(HTTPClientError) -> [UInt8] {
        var status = CReceiptSockets_Status()
        var bytes = [UInt8](repeating: 0, count: maximum)
        let count = bytes.withUnsafeMutableBytes {
            CReceiptSockets_receive(descriptor, $0.baseAddress, $0.count, deadline.milliseconds, &status)
        }
        guard count >= 0 else {
            throw Self.error(
                status, timedOut: "\(peer) sent no complete response within \(deadline.timeout)",
                failed: "receiving the response from \(peer) failed")
        }
        bytes.removeLast(maximum - count)
        return bytes
    }

    /// Whether `text` is an IPv6 address as `inet_pton` reads it.
    static func isIPv6Literal(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    /// The error a failed call's status stands for, with the given sentences.
    private static func error(
        _ status: CReceiptSockets_Status, timedOut: String, failed: String, closed: String = "",
        resolving host: String = ""
    ) -> HTTPClientError {
        switch status.outcome {
        case .timedOut:
            return HTTPClientError(.timedOut, timedOut)
        case .resolveFailed:
            return HTTPClientError(
                .connectionFailed, "cannot resolve the host \"\(host)\": \(String(cString: gai_strerror(status.code)))")
        case .closedByPeer:
            return HTTPClientError(.noResponse, "\(closed) (\(systemError(status.code)))")
        case .ok, .systemFailed:
            return HTTPClientError(.connectionFailed, "\(failed): \(systemError(status.code))")
        }
    }

    private static func systemError(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}
