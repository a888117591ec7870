import Foundation
import ReceiptService
import Testing

@Suite("Service limits: deadlines and the per-client cap, configured under limits")
struct ServiceLimitsTests {
    @Test("the new limits keys are read, and default to 10 s for a head, 30 s for a body, 64 connections a client")
    func keysAreRead() throws {
        let files = try ConfigurationTests.Files()
        let defaults = try files.configuration(ConfigurationTests.Files.valid)
        #expect(defaults.headerTimeoutSeconds == 10)
        #expect(defaults.bodyTimeoutSeconds == 30)
        #expect(defaults.maximumConnectionsPerClient == 64)

        let members =
            ConfigurationTests.Files.valid.filter { !$0.hasPrefix(#""limits""#) } + [
                #""limits":{"header_timeout_seconds":5,"body_timeout_seconds":60,"max_connections_per_client":8}"#
            ]
        let configured = try files.configuration(members)
        #expect(configured.headerTimeoutSeconds == 5)
        #expect(configured.bodyTimeoutSeconds == 60)
        #expect(configured.maximumConnectionsPerClient == 8)
    }

    @Test(
        "a limit out of range or of the wrong type is refused with its key path",
        arguments: [
            (#"{"header_timeout_seconds":0}"#, "limits.header_timeout_seconds"),
            (#"{"header_timeout_seconds":3601}"#, "limits.header_timeout_seconds"),
            (#"{"body_timeout_seconds":0}"#, "limits.body_timeout_seconds"),
            (#"{"body_timeout_seconds":"long"}"#, "limits.body_timeout_seconds"),
            (#"{"max_connections_per_client":0}"#, "limits.max_connections_per_client"),
            (#"{"max_connections_per_client":65537}"#, "limits.max_connections_per_client"),
        ])
    func outOfRange(limits: String, path: String) throws {
        let files = try ConfigurationTests.Files()
        let members = ConfigurationTests.Files.valid.filter { !$0.hasPrefix(#""limits""#) } + [#""limits":\#(limits)"#]
        #expect {
            try files.configuration(members)
        } throws: { error in
            (error as? ServiceConfigurationError)?.path == path
        }
    }

    @Test("the service holds a client to max_connections_per_client: its next connection gets 503, others are served")
    func perClientCapReachesTheServer() throws {
        let fixture = try ServiceFixture { $0.maximumConnectionsPerClient = 2 }
        let held = try (0..<2).map { _ in try SocketClient(port: fixture.server.port) }
        // The server has accepted both once one of them is served.
        try held[0].send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try held[0].response().status == 200)

        let third = try SocketClient(port: fixture.server.port)
        try third.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = try third.response()
        let other = try SocketClient(port: fixture.server.port, source: "127.0.0.2")
        try other.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")

        #expect(refused.status == 503)
        #expect(refused.body.contains(#""code":"too_many_connections""#))
        #expect(try other.response().status == 200)
    }

    @Test("a header deadline configured for the service cuts off a head sent one byte at a time")
    func headerDeadlineReachesTheServer() throws {
        let fixture = try ServiceFixture {
            $0.headerTimeoutSeconds = 1
            $0.connectionTimeoutSeconds = 30
        }
        let client = try SocketClient(port: fixture.server.port)
        let head = "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Padding: " + String(repeating: "a", count: 40)

        // Ten seconds of one byte every quarter of a second, until the server answers.
        var sent = 0
        for character in head where !client.hasData() {
            guard (try? client.send(String(character))) != nil else { break }
            sent += 1
            usleep(250_000)
        }

        #expect(sent >= 3 && sent < head.count)
        #expect(try client.response().status == 408)
    }
}
