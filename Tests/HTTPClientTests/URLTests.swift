import Testing

@testable import HTTPClient

/// A URL the client refuses, and the words its message must contain.
struct RefusedURL: CustomTestStringConvertible, Sendable {
    let url: String
    let reason: String
    var testDescription: String { "\(url) (\(reason))" }
}

/// Which URLs are accepted and how they are split; what is refused is refused before any connection.
struct URLTests {
    @Test func splitsHostPortAndTarget() throws {
        let url = try HTTPURL("http://receiver.example:8080/apple/v2?store=1")
        #expect(url.host == "receiver.example")
        #expect(url.port == 8080)
        #expect(url.target == "/apple/v2?store=1")
        #expect(url.hostHeader == "receiver.example:8080")
    }

    @Test func checkURLAcceptsWhatPostSendsToAndRefusesTheRest() throws {
        try HTTPClient.checkURL("http://127.0.0.1:9000/apple")
        #expect(throws: HTTPClientError.self) { try HTTPClient.checkURL("https://receiver.example/apple") }
        #expect(throws: HTTPClientError.self) { try HTTPClient.checkURL("http://receiver.example:99999/") }
    }

    @Test func defaultsToPort80AndTheRootPath() throws {
        let url = try HTTPURL("http://10.0.0.1")
        #expect(url.port == 80)
        #expect(url.target == "/")
        #expect(url.hostHeader == "10.0.0.1")
    }

    @Test func keepsAQueryWithoutAPath() throws {
        #expect(try HTTPURL("http://h?x=1").target == "/?x=1")
    }

    @Test func unbracketsAnIPv6LiteralForConnectingOnly() throws {
        let url = try HTTPURL("http://[2001:db8::1]:81/")
        #expect(url.host == "2001:db8::1")
        #expect(url.hostHeader == "[2001:db8::1]:81")
    }

    @Test(arguments: [
        RefusedURL(url: "https://receiver.example/", reason: "https is not supported"),
        RefusedURL(url: "ftp://receiver.example/", reason: "scheme \"ftp\""),
        RefusedURL(url: "receiver.example/notify", reason: "no scheme"),
        RefusedURL(url: "http://user:secret@receiver.example/", reason: "user information"),
        RefusedURL(url: "http://receiver.example/notify#part", reason: "fragment"),
        RefusedURL(url: "http:///notify", reason: "host is empty"),
        RefusedURL(url: "http://:80/", reason: "host is empty"),
        RefusedURL(url: "http://receiver.example:0/", reason: "port \"0\""),
        RefusedURL(url: "http://receiver.example:65536/", reason: "port \"65536\""),
        RefusedURL(url: "http://receiver.example:http/", reason: "port \"http\""),
        RefusedURL(url: "http://receiver.example:/", reason: "port \"\""),
        RefusedURL(url: "http://receiver.example:+80/", reason: "port \"+80\""),
        RefusedURL(url: "http://256.0.0.1/", reason: "not an IPv4 address"),
        RefusedURL(url: "http://010.0.0.1/", reason: "not an IPv4 address"),
        RefusedURL(url: "http://127.1/", reason: "not an IPv4 address"),
        RefusedURL(url: "http://[::g]/", reason: "not an IPv6 address"),
        RefusedURL(url: "http://[::1/", reason: "no closing bracket"),
        RefusedURL(url: "http://[::1]x/", reason: "only a port may follow"),
        RefusedURL(url: "http://[fe80::1%25eth0]/", reason: "zone identifiers"),
        RefusedURL(url: "http://recei ver.example/", reason: "the host contains \" \""),
        RefusedURL(url: "http://bücher.example/", reason: "the host contains \"ü\""),
        RefusedURL(url: "http://receiver.example/a b", reason: "0x20 that must be percent-encoded"),
        RefusedURL(url: "http://receiver.example/%zz", reason: "two hex digits"),
    ])
    func refusesWithTheRuleNamed(_ refused: RefusedURL) {
        #expect {
            try HTTPClient().post(refused.url, body: [], timeout: .seconds(1))
        } throws: { error in
            guard let error = error as? HTTPClientError else {
                return false
            }
            return error.code == .unsupportedURL && error.message.contains(refused.reason)
                && error.message.contains(refused.url)
        }
    }
}

/// Headers the client cannot write are refused before any connection.
struct RequestHeaderTests {
    @Test(arguments: [("X-Injected", "a\r\nHost: evil"), ("Bad Name", "v"), ("Host", "other"), ("content-length", "1")])
    func refusesAHeaderItCannotWrite(_ name: String, _ value: String) {
        #expect {
            try HTTPClient().post("http://127.0.0.1:9/", body: [], headers: [(name, value)], timeout: .seconds(1))
        } throws: { error in
            (error as? HTTPClientError)?.code == .invalidRequest
        }
    }
}
