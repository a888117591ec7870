import Glibc

/// Why a raw connection failed; `connectFailed` carries `errno` so tests can tell a refused connection.
enum RawConnectionError: Error, Equatable {
    case socketFailed(errno: Int32)
    case connectFailed(errno: Int32)
    case sendFailed(errno: Int32)
    case receiveFailed(errno: Int32)
    case closedBeforeResponse
    case malformedResponse(String)
}

/// A response as read off the wire.
struct RawHTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A blocking TCP connection to 127.0.0.1 for sending exactly the bytes a test wants (malformed, chunked, partial)
/// and reading what comes back, every wait bounded by a receive timeout.
final class RawHTTPConnection {
    private let descriptor: Int32
    private var pending: [UInt8] = []

    /// Connects, or throws ``RawConnectionError/connectFailed(errno:)`` (ECONNREFUSED when nobody listens).
    ///
    /// - Parameter source: the loopback address to connect from (`127.0.0.2` is another client than the default
    ///   `127.0.0.1` to the server: Linux routes all of 127.0.0.0/8 to the loopback interface).
    init(port: UInt16, timeoutSeconds: Int = 10, source: String? = nil) throws(RawConnectionError) {
        descriptor = try Self.connect(port: port, timeoutSeconds: timeoutSeconds, source: source)
    }

    deinit {
        close(descriptor)
    }

    private static func connect(port: UInt16, timeoutSeconds: Int, source: String?) throws(RawConnectionError)
        -> Int32
    {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw .socketFailed(errno: errno)
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        let timeoutSize = socklen_t(MemoryLayout<timeval>.size)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        let bound = source.map { inet_pton(AF_INET, $0, &local.sin_addr) == 1 } ?? true
        let connected = withUnsafeBytes(of: &address) { addressBytes -> Bool in
            guard let socketAddress = addressBytes.baseAddress?.assumingMemoryBound(to: sockaddr.self) else {
                return false
            }
            let boundLocally =
                source == nil
                || withUnsafeBytes(of: &local) { localBytes in
                    guard let localAddress = localBytes.baseAddress?.assumingMemoryBound(to: sockaddr.self) else {
                        return false
                    }
                    return Glibc.bind(descriptor, localAddress, socklen_t(localBytes.count)) == 0
                }
            return bound && boundLocally
                && setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, timeoutSize) == 0
                && setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, timeoutSize) == 0
                && Glibc.connect(descriptor, socketAddress, socklen_t(addressBytes.count)) == 0
        }
        guard connected else {
            let code = errno
            close(descriptor)
            throw .connectFailed(errno: code)
        }
        return descriptor
    }

    func send(_ text: String) throws(RawConnectionError) {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws(RawConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else {
                throw .sendFailed(errno: errno)
            }
            offset += sent
        }
    }

    /// Reads one response: status line, headers, then `Content-Length` bytes of body (or everything up to EOF);
    /// an interim 1xx response has no body.
    func readResponse() throws(RawConnectionError) -> RawHTTPResponse {
        let separator = Array("\r\n\r\n".utf8)
        var headerEnd = pending.firstRange(of: separator)
        while headerEnd == nil {
            guard try receiveMore() else {
                throw .closedBeforeResponse
            }
            headerEnd = pending.firstRange(of: separator)
        }
        guard let headerEnd else {
            throw .closedBeforeResponse
        }
        var response = try Self.parseHead(pending[..<headerEnd.lowerBound])
        pending.removeSubrange(..<headerEnd.upperBound)
        if (100..<200).contains(response.status) {
            return response
        }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            while pending.count < length {
                guard try receiveMore() else {
                    throw .closedBeforeResponse
                }
            }
            response.body = Array(pending[..<length])
            pending.removeSubrange(..<length)
        } else {
            while try receiveMore() {}
            response.body = pending
            pending = []
        }
        return response
    }

    /// The first response in `bytes` (what ``readUntilClose()`` returned): its head, and `Content-Length` bytes
    /// of body or the rest.
    static func parse(_ bytes: [UInt8]) throws(RawConnectionError) -> RawHTTPResponse {
        guard let headerEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw .closedBeforeResponse
        }
        var response = try parseHead(bytes[..<headerEnd.lowerBound])
        let rest = bytes[headerEnd.upperBound...]
        let length = response.header("Content-Length").flatMap { Int($0) } ?? rest.count
        response.body = Array(rest.prefix(length))
        return response
    }

    private static func parseHead(_ head: ArraySlice<UInt8>) throws(RawConnectionError) -> RawHTTPResponse {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw .malformedResponse(String(lines.first ?? ""))
        }
        let headers = lines.dropFirst().map { line -> (name: String, value: String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts.first ?? ""), String(parts.dropFirst().first ?? "").trimmingSpaces())
        }
        return RawHTTPResponse(status: status, headers: headers, body: [])
    }

    /// Whether the server closes the connection (EOF or reset) before the receive timeout; data received meanwhile
    /// is kept for ``readResponse()``.
    func waitForClose() -> Bool {
        do {
            while try receiveMore() {}
            return true
        } catch .receiveFailed(let code) {
            return code == ECONNRESET
        } catch {
            return false
        }
    }

    /// Whether the server has sent something not read yet, or closed the connection; does not wait.
    func hasData() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    /// Everything the server sends until it closes the connection (or the receive timeout passes), with whether it
    /// closed: what a test needs to count the responses it got.
    func readUntilClose() -> (bytes: [UInt8], closed: Bool) {
        let closed = waitForClose()
        defer { pending = [] }
        return (pending, closed)
    }

    /// Appends what arrives to `pending`; false at EOF.
    private func receiveMore() throws(RawConnectionError) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard received >= 0 else {
            throw .receiveFailed(errno: errno)
        }
        pending.append(contentsOf: buffer[..<received])
        return received > 0
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
