import Foundation
import ReceiptCrypto
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

/// Receipts whose payload we encode but whose envelope OpenSSL builds, in the shapes its `cms` and `smime`
/// commands produce: signed attributes, key identifiers, streaming BER, SHA-1.
@Suite("Receipts signed by OpenSSL")
struct InteroperabilityTests {
    struct Variant: CustomTestStringConvertible, Sendable {
        let name: String
        let algorithm: GeneratedKeyAlgorithm
        let arguments: [String]
        let expected: ReceiptVerificationError.Code?
        var testDescription: String { name }
    }

    static let variants: [Variant] = [
        Variant(
            name: "cms, signed attributes, RSA", algorithm: .rsa2048, arguments: ["cms", "-sign", "-md", "sha256"],
            expected: nil),
        Variant(
            name: "cms, signed attributes, EC", algorithm: .ecP256, arguments: ["cms", "-sign", "-md", "sha256"],
            expected: nil),
        Variant(
            name: "cms, no attributes (Apple's layout)", algorithm: .rsa2048, arguments: ["cms", "-sign", "-noattr"],
            expected: nil),
        Variant(
            name: "cms, subject key identifier", algorithm: .ecP256, arguments: ["cms", "-sign", "-keyid"],
            expected: nil),
        Variant(name: "cms, SHA-1", algorithm: .rsa2048, arguments: ["cms", "-sign", "-md", "sha1"], expected: nil),
        Variant(name: "cms, streamed BER", algorithm: .rsa2048, arguments: ["cms", "-sign", "-stream"], expected: nil),
        Variant(name: "smime (PKCS#7)", algorithm: .rsa2048, arguments: ["smime", "-sign"], expected: nil),
        Variant(
            name: "smime (PKCS#7), no attributes", algorithm: .ecP256, arguments: ["smime", "-sign", "-noattr"],
            expected: nil),
        Variant(
            name: "cms, SHA-512", algorithm: .rsa2048, arguments: ["cms", "-sign", "-md", "sha512"],
            expected: .unsupportedAlgorithm),
        Variant(name: "cms, detached", algorithm: .rsa2048, arguments: ["cms", "-sign"], expected: .missingContent),
    ]

    @Test("our verifier reads OpenSSL-built envelopes", arguments: variants)
    func openSSLEnvelope(_ variant: Variant) throws {
        let chain = try TestFixtures.chain(variant.algorithm)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try Data(TestFixtures.receipt().payloadDER).write(to: URL(fileURLWithPath: file("payload.der")))
        try Data(chain.signer.pemEncoded.utf8).write(to: URL(fileURLWithPath: file("signer.pem")))
        try Data(chain.signerKey.pkcs8PEM.utf8).write(to: URL(fileURLWithPath: file("signer.key")))
        try Data(chain.intermediate.pemEncoded.utf8).write(to: URL(fileURLWithPath: file("intermediate.pem")))

        let detached = variant.name.hasSuffix("detached")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments =
            variant.arguments + [
                "-binary", "-outform", "DER", "-in", file("payload.der"), "-signer", file("signer.pem"),
                "-inkey", file("signer.key"), "-certfile", file("intermediate.pem"), "-out", file("receipt.der"),
            ] + (detached ? [] : ["-nodetach"])
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let signed = Array(try Data(contentsOf: URL(fileURLWithPath: file("receipt.der"))))
        let verifier = try TestFixtures.verifier(variant.algorithm)
        #expect(TestFixtures.code(signed, verifier) == variant.expected)
        if variant.expected == nil {
            #expect(try verifier.verify(signed).receipt == TestFixtures.receipt())
        }
    }
}
