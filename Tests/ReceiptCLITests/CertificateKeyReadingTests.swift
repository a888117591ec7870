import Foundation
import PurchaseVerifier
import ReceiptCrypto
import StrictJSON
import Testing

/// `receipt verify` reads certificates' keys with OpenSSL's own RSA and EC readers
/// (`OpenSSLStart.readCertificateKeysDirectly`); this test process never asks for that, so its verifier reads them
/// through OpenSSL 3.0's provider decoders, as a backend linking the library does.
@Suite("Certificates' keys read directly give the answers the decoders give")
struct CertificateKeyReadingTests {
    static let vectors = [
        "Tests/ReceiptVerifierTests/Vectors", "Tests/ReceiptJWSTests/Vectors", "Tests/LegacyReceiptTests/Vectors",
        "Tests/ReceiptServiceTests/Vectors",
    ]
    static let anchors = ["certs/apple/AppleIncRootCertificate.cer", "certs/apple/AppleRootCA-G3.cer"]
    static let intermediates = [
        "certs/apple/AppleITunesStoreCertificationAuthority.cer", "certs/apple/AppleWWDRCA.cer",
    ]

    func root(_ path: String) -> String { CLIRunner.packageRoot.appendingPathComponent(path).path }

    func certificates(_ paths: [String]) throws -> [Certificate] {
        try paths.flatMap { path in
            try Certificate.load(pemOrDER: Array(try Data(contentsOf: URL(fileURLWithPath: root(path)))))
        }
    }

    @Test("every real and tampered vector gets from receipt verify the verdict, status and error the library gives")
    func sameAnswers() throws {
        var arguments = ["verify"] + Self.vectors.map(root) + ["--recursive", "--json"]
        arguments += Self.anchors.flatMap { ["--trust", root($0)] }
        arguments += Self.intermediates.flatMap { ["--intermediate", root($0)] }
        let result = try CLIRunner().run(arguments)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count >= 90, "\(result.standardError)")
        let verifier = try PurchaseVerifier(
            trustAnchors: try certificates(Self.anchors), intermediates: try certificates(Self.intermediates))
        var valid = 0
        for line in lines {
            let answer = try JSONValue(parsing: Array(line.utf8))
            guard case .string(let file) = answer["file"] else {
                Issue.record("a line without its file: \(line)")
                continue
            }
            let input = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            switch Result(catching: { () throws(PurchaseProofError) in try verifier.verify(input) }) {
            case .success:
                valid += 1
                #expect(answer["valid"] == .bool(true), "\(file)")
                #expect(answer["status"] == .integer(0), "\(file)")
            case .failure(let error):
                #expect(answer["valid"] == .bool(false), "\(file)")
                #expect(answer["status"] == .integer(error.status), "\(file)")
                #expect(answer["error"]?["code"] == .string(error.code), "\(file)")
                #expect(answer["error"]?["message"] == .string(error.message), "\(file)")
            }
        }
        #expect(valid >= 50)
    }
}
