/// Where a server listens, written `HOST:PORT`: an IPv4 literal (`127.0.0.1:8080`), a host name
/// (`localhost:8080`, resolved when the server starts) or a bracketed IPv6 literal (`[::1]:8080`).
public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
    /// The host as written, without brackets: `127.0.0.1`, `localhost`, `::1`.
    public var host: String
    /// The TCP port; 0 asks the kernel for a free one.
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; the error message says what is wrong and shows the accepted forms.
    public init(parsing text: String) throws(HTTPServerError) {
        let forms = "HOST:PORT such as 127.0.0.1:8080, localhost:8080 or [::1]:8080"
        func refuse(_ problem: String) -> HTTPServerError {
            HTTPServerError(.invalidConfiguration, "\(problem); use \(forms), found \"\(text)\"")
        }
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw refuse("an IPv6 address in brackets must be followed by :PORT")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
            guard hostPart.contains(":") else { throw refuse("brackets are for IPv6 addresses") }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw refuse("the port is missing") }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { throw refuse("an IPv6 address must be written in brackets") }
        }
        guard !hostPart.isEmpty else { throw refuse("the host is missing") }
        guard hostPart.utf8.allSatisfy(Self.isHostByte) else {
            throw refuse("the host may hold only letters, digits, '.', '-', ':' and '%'")
        }
        guard !portPart.isEmpty, portPart.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let port = UInt16(portPart)
        else {
            throw refuse("the port must be a number from 0 to 65535")
        }
        self.init(host: String(hostPart), port: port)
    }

    /// `HOST:PORT`, with an IPv6 host in brackets, as a URL authority.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"),
            UInt8(ascii: "%"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
