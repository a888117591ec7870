import Foundation
import Testing

/// What a newcomer reads when they hand the tool the wrong thing: what it is, what to do, the documented exit
/// status, and no Swift type names.
@Suite("Errors a newcomer reads")
struct NewcomerErrorTests {
    static let appleRoot = "certs/apple/AppleIncRootCertificate.cer"
    static let legacyReceipt = "Tests/LegacyReceiptTests/Vectors/revenuecat/base64encoded_unsupportedReceipt2.txt"

    func root(_ path: String) -> String { CLIRunner.packageRoot.appendingPathComponent(path).path }

    func verify(_ runner: CLIRunner, _ path: String, _ extra: [String] = []) throws -> CLIRunner.Result {
        try runner.run(["verify", path, "--trust", root(Self.appleRoot)] + extra)
    }

    /// Swift's spelling of types and values (`HTTPServerError.bindFailed`, `Optional(…)`, `Foo.Bar(…)`).
    static func hasSwiftTypeName(_ text: String) -> Bool {
        text.contains("Optional(") || text.contains("Error.") || text.contains("Swift.")
            || text.range(of: #"\b[A-Z][A-Za-z]+\.[a-z][A-Za-z]+\("#, options: .regularExpression) != nil
    }

    @Test("a PEM certificate given as a receipt is called one, with where a certificate belongs")
    func pemCertificate() throws {
        let result = try verify(CLIRunner(), root("certs/dev-rsa/root-ca.pem"))
        #expect(result.status == 1)
        #expect(result.standardError.contains("this is a PEM certificate, not a purchase proof"))
        #expect(result.standardError.contains("--trust"))
    }

    @Test("a DER certificate given as a receipt is called an X.509 certificate, naming its subject")
    func derCertificate() throws {
        let result = try verify(CLIRunner(), root("certs/apple/AppleRootCA-G3.cer"))
        #expect(result.status == 1)
        #expect(result.standardError.contains("is an X.509 certificate (C=US,O=Apple Inc."), "\(result.standardError)")
    }

    @Test(
        "JSON that is neither StoreKit 2 signed data nor a notification says what it looks like, in verify and inspect")
    func otherJSON() throws {
        let runner = try CLIRunner()
        try runner.write("request.json", #"{"receipt-data": "MIIT…", "password": "secret"}"#)
        for command in ["verify", "inspect"] {
            let result =
                command == "verify"
                ? try verify(runner, "request.json") : try runner.run(["inspect", "request.json"])
            #expect(result.status == 1)
            #expect(result.standardError.contains("a JSON object with keys receipt-data, password"))
            #expect(result.standardError.contains(#"nor an App Store Server Notification body ({"signedPayload": …})"#))
        }
    }

    @Test("an iOS 6 receipt whose only problem is its missing issuer names the file in certs/apple/ to add")
    func legacyMissingIntermediate() throws {
        let runner = try CLIRunner()
        let without = try verify(runner, root(Self.legacyReceipt))
        #expect(without.status == 1)
        #expect(without.standardError.contains("certs/apple/AppleITunesStoreCertificationAuthority.cer"))
        let with = try verify(
            runner, root(Self.legacyReceipt),
            ["--intermediate", root("certs/apple/AppleITunesStoreCertificationAuthority.cer")])
        #expect(with.status == 0, "\(with.standardError)")
        #expect(with.output.hasPrefix("valid: iOS 6 transaction receipt com.es.Purchaser"))
    }

    @Test("a trust anchor file that is not a certificate is rejected input, exit 1, not a usage error")
    func badAnchorIsInput() throws {
        let result = try verifyWithAnchorThatIsNotACertificate()
        #expect(result.status == 1)
        #expect(result.standardError.contains("--trust not-a-cert.pem: "))
    }

    // `receipt` has OpenSSL load its error texts only when a failure is described (OpenSSLStart): these two
    // check that they are there when one is, none of OpenSSL's errors shown as a bare number.
    @Test("a trust anchor that is not a certificate is explained in OpenSSL's own words")
    func badAnchorInOpenSSLWords() throws {
        let result = try verifyWithAnchorThatIsNotACertificate()
        #expect(result.status == 1)
        #expect(result.standardError.contains("nested asn1 error"), "\(result.standardError)")
        #expect(!Self.hasBareOpenSSLCode(result.standardError), "\(result.standardError)")
    }

    @Test("a signing key that is not a key is explained in OpenSSL's own words, its decoder's reason included")
    func badKeyInOpenSSLWords() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest()
        try runner.write("not-a-key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        let result = try runner.run([
            "sign", "--key", "not-a-key.pem", "--cert", "dev/receipt-signer.pem", "purchase.json", "-o", "out.der",
        ])
        #expect(result.status == 1)
        #expect(result.standardError.contains("unsupported (No supported data to decode"), "\(result.standardError)")
        #expect(!Self.hasBareOpenSSLCode(result.standardError), "\(result.standardError)")
    }

    /// `receipt verify` of a real receipt with `--trust not-a-cert.pem`, a file that holds "hello".
    func verifyWithAnchorThatIsNotACertificate() throws -> CLIRunner.Result {
        let runner = try CLIRunner()
        try runner.write("not-a-cert.pem", "hello")
        return try runner.run(["verify", root(CLITests.realReceipt), "--trust", "not-a-cert.pem"])
    }

    /// An OpenSSL error whose text was not found, as `CryptoError` writes it (`error 109052059`).
    static func hasBareOpenSSLCode(_ text: String) -> Bool {
        text.range(of: #"\berror [0-9]+\b"#, options: .regularExpression) != nil
    }

    @Test("one purchase reads \"1 purchase\"")
    func singular() throws {
        let runner = try CLIRunner()
        let watch = root("Tests/ReceiptVerifierTests/Vectors/real/tpinappreceipt/receipt-watch.der")
        let result = try runner.run(["verify", watch, watch, "--trust", root(Self.appleRoot)])
        #expect(result.status == 0)
        #expect(result.output.contains(": valid: net.zachariadis.cyclemaps, 1 purchase\n"))
    }

    @Test(
        "no message names a Swift type",
        arguments: [
            ["serve", "--config", "/nonexistent/service.json"], ["serve", "--config", "x", "--listen", "::1:80"],
            ["verify", "/nonexistent.der", "--trust", "/nonexistent.pem"], ["sign", "--key", "/dev/null"],
            ["certs", "create"], ["entitlements", "x", "--trust", "y"], ["bench", "--seconds", "0"],
            ["inspect", "/dev/null"], ["verify", "--at", "yesterday", "--trust", "x"],
        ])
    func noSwiftTypeNames(arguments: [String]) throws {
        let result = try CLIRunner().run(arguments)
        #expect(result.status != 0)
        #expect(!result.standardError.isEmpty)
        #expect(!Self.hasSwiftTypeName(result.standardError), "\(result.standardError)")
    }

    @Test("the type-name check itself catches what it is for")
    func typeNameCheck() {
        #expect(Self.hasSwiftTypeName("HTTPServerError.invalidConfiguration: threads"))
        #expect(Self.hasSwiftTypeName("value Optional(3)"))
        #expect(!Self.hasSwiftTypeName("receipt verify: x.der: invalid app_receipt: malformed: input is empty"))
    }
}
