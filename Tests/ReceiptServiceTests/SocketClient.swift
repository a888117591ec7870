import Foundation
import Glibc

/// A blocking TCP client for exact bytes, from a chosen loopback address, every wait bounded by a timeout.
final class SocketClient {
    private let descriptor: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port` from `source`, or throws.
    init(port: UInt16, source: String = "127.0.0.1", timeoutSeconds: Int = 5) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw FixtureError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, size) == 0 }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, size) == 0 }
        }
        guard bound, connected else {
            close(descriptor)
            throw FixtureError("cannot connect from \(source) to port \(port): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw FixtureError("send: errno \(errno)") }
            offset += sent
        }
    }

    /// One response with a `Content-Length`: the status and the body.
    func response() throws -> (status: Int, body: String) {
        let separator = Array("\r\n\r\n".utf8)
        while pending.firstRange(of: separator) == nil {
            try receive()
        }
        guard let end = pending.firstRange(of: separator) else { throw FixtureError("no head") }
        let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
        pending.removeSubrange(..<end.upperBound)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "),
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else {
            throw FixtureError("not a status line: \(head)")
        }
        let length =
            lines.first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        while pending.count < length {
            try receive()
        }
        defer { pending.removeSubrange(..<length) }
        return (status, String(decoding: pending[..<length], as: UTF8.self))
    }

    /// Whether the server has sent something not read yet, or closed; does not wait.
    func hasData() -> Bool {
        var byte: UInt8 = 0
        return !pending.isEmpty || recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    private func receive() throws {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard received > 0 else { throw FixtureError(received == 0 ? "closed" : "recv: errno \(errno)") }
        pending += buffer[..<received]
    }
}
