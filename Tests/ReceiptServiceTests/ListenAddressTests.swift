import Foundation
import HTTPServer
import ReceiptService
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Listen addresses: IPv4 and IPv6 literals and host names")
struct ListenAddressTests {
    @Test(
        "HOST:PORT is read as written, IPv6 in brackets",
        arguments: [
            ("127.0.0.1:8080", "127.0.0.1", 8080), ("localhost:0", "localhost", 0), ("[::1]:8080", "::1", 8080),
            ("0.0.0.0:443", "0.0.0.0", 443), ("[::]:9", "::", 9),
            ("receipts.example.com:80", "receipts.example.com", 80),
        ] as [(String, String, UInt16)])
    func parsed(text: String, host: String, port: UInt16) throws {
        let address = try ListenAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.description == text)
    }

    @Test(
        "a malformed address is refused with what is wrong and the accepted forms",
        arguments: [
            ("::1:8080", "an IPv6 address must be written in brackets"), ("127.0.0.1", "the port is missing"),
            ("127.0.0.1:http", "the port must be a number"), ("127.0.0.1:65536", "the port must be a number"),
            (":8080", "the host is missing"), ("[::1]8080", "must be followed by :PORT"),
            ("[localhost]:80", "brackets are for IPv6"), ("a b:80", "the host may hold only"),
        ])
    func refused(text: String, problem: String) {
        let error = #expect(throws: HTTPServerError.self) { try ListenAddress(parsing: text) }
        #expect(error?.description.contains(problem) == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("such as 127.0.0.1:8080, localhost:8080 or [::1]:8080") == true)
        #expect(error?.description.contains("HTTPServerError") == false)
    }

    /// GET `/healthz` at `authority` with curl (Foundation's URLSession on Linux refuses bracketed IPv6 hosts),
    /// the HTTP status.
    func health(_ authority: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "curl", "-s", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://\(authority)/healthz",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let status = Int(String(decoding: printed, as: UTF8.self)) else {
            throw FixtureError("curl printed no status (is curl installed? run .ci/setup --tests)")
        }
        return status
    }

    @Test("the service listens on the IPv6 loopback and answers there")
    func ipv6Loopback() throws {
        let fixture = try ServiceFixture { $0.host = "::1" }
        #expect(try health("[::1]:\(fixture.server.port)") == 200)
    }

    @Test("the service listens on a host name, resolved when it starts")
    func hostName() throws {
        let fixture = try ServiceFixture { $0.host = "localhost" }
        #expect(try health("localhost:\(fixture.server.port)") == 200)
    }

    @Test("the configuration's listen key takes every form, and refuses a bad one naming the key")
    func configurationKey() throws {
        let files = try ConfigurationTests.Files()
        var members = ConfigurationTests.Files.valid.filter { !$0.hasPrefix(#""listen""#) }
        let ipv6 = try files.configuration(members + [#""listen":"[::1]:8443""#])
        #expect(ipv6.host == "::1")
        #expect(ipv6.port == 8443)
        #expect(try files.configuration(members + [#""listen":"localhost:8080""#]).host == "localhost")
        members.append(#""listen":"::1:8080""#)
        let error = #expect(throws: ServiceConfigurationError.self) { try files.configuration(members) }
        #expect(error?.path == "listen")
        #expect(error?.rule.contains("an IPv6 address must be written in brackets") == true)
    }

    @Test("a name that does not resolve is refused at start with the resolver's reason, in plain words")
    func unresolvable() throws {
        let error = #expect(throws: ReceiptServerError.self) {
            _ = try ServiceFixture { $0.host = "no-such-host.invalid" }
        }
        #expect(error?.description.contains("cannot resolve the host \"no-such-host.invalid\"") == true)
        #expect(error?.description.contains("Error") == false, "\(error?.description ?? "")")
    }
}
