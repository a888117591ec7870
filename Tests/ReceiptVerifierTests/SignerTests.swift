import Foundation
import ReceiptCMS
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

@Suite("Signing receipts")
struct SignerTests {
    @Test("a signed receipt verifies and reads back unchanged", arguments: GeneratedKeyAlgorithm.allCases)
    func roundTrip(_ algorithm: GeneratedKeyAlgorithm) throws {
        let original = TestFixtures.receipt()
        let verified = try TestFixtures.verifier(algorithm).verify(TestFixtures.signed(original, with: algorithm))
        #expect(verified.receipt == original)
        #expect(verified.chain.count == 3)
        #expect(verified.validationTime == original.creationDate)
    }

    @Test("the envelope mirrors Apple's layout", arguments: GeneratedKeyAlgorithm.allCases)
    func appleLayout(_ algorithm: GeneratedKeyAlgorithm) throws {
        let chain = try TestFixtures.chain(algorithm)
        let der = try TestFixtures.signed(with: algorithm)
        _ = try ASN1Node.parse(der, rules: .der)
        let signedData = try CMSSignedData(berEncoded: der[...])
        #expect(signedData.contentType == .cmsData)
        #expect(signedData.content.map(Array.init) == TestFixtures.receipt().payloadDER)
        #expect(signedData.certificates.map(Array.init) == [chain.signer.derEncoded, chain.intermediate.derEncoded])
        #expect(signedData.signerInfos.count == 1)
        let signer = try #require(signedData.signerInfos.first)
        #expect(signer.signedAttributes == nil)
        #expect(signer.digestAlgorithm.algorithm == .sha256)
        #expect(signer.signatureAlgorithm.algorithm == (algorithm == .rsa2048 ? .rsaEncryption : .ecdsaWithSHA256))
        #expect(signedData.digestAlgorithms.map(\.algorithm) == [.sha256])
    }

    @Test("OpenSSL's cms -verify accepts what we sign", arguments: GeneratedKeyAlgorithm.allCases)
    func openSSLAccepts(_ algorithm: GeneratedKeyAlgorithm) throws {
        let chain = try TestFixtures.chain(algorithm)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiptFile = directory.appendingPathComponent("receipt.der")
        let rootFile = directory.appendingPathComponent("root.pem")
        let payloadFile = directory.appendingPathComponent("payload.bin")
        try Data(TestFixtures.signed(with: algorithm)).write(to: receiptFile)
        try Data(chain.root.pemEncoded.utf8).write(to: rootFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "cms", "-verify", "-binary", "-inform", "DER", "-in", receiptFile.path, "-CAfile", rootFile.path,
            "-purpose", "any", "-out", payloadFile.path,
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(Array(try Data(contentsOf: payloadFile)) == TestFixtures.receipt().payloadDER)
    }

    @Test("a receipt bound to a device verifies for that device only")
    func deviceBinding() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        let device = try #require(DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))
        let signed = try ReceiptSigner(credentials: chain.credentials).sign(TestFixtures.receipt(), boundTo: device)
        let verifier = try TestFixtures.verifier()
        let verified = try verifier.verify(signed, options: VerificationOptions(deviceIdentifier: device))
        #expect(verified.receipt.opaqueValue?.count == 16)
        let otherDevice = try #require(DeviceIdentifier("00000000-0000-0000-0000-000000000000"))
        #expect(
            TestFixtures.code(signed, verifier, options: VerificationOptions(deviceIdentifier: otherDevice))
                == .deviceHashMismatch)
    }

    @Test("each binding draws a fresh opaque value")
    func freshOpaqueValue() throws {
        let signer = try ReceiptSigner(credentials: TestFixtures.chain(.ecP256).credentials)
        let device = try #require(DeviceIdentifier("6c:40:08:b5:94:5e"))
        let first = try Receipt(
            payload: CMSSignedData(berEncoded: signer.sign(TestFixtures.receipt(), boundTo: device)[...]).content ?? [])
        let second = try Receipt(
            payload: CMSSignedData(berEncoded: signer.sign(TestFixtures.receipt(), boundTo: device)[...]).content ?? [])
        #expect(first.opaqueValue != second.opaqueValue)
        #expect(first.sha1Hash != second.sha1Hash)
    }

    @Test("a receipt without a device binding fails a device check")
    func unboundReceiptFailsDeviceCheck() throws {
        let device = try #require(DeviceIdentifier("6c:40:08:b5:94:5e"))
        let code = TestFixtures.code(
            try TestFixtures.signed(), try TestFixtures.verifier(),
            options: VerificationOptions(deviceIdentifier: device))
        #expect(code == .deviceHashMismatch)
    }

    @Test("a key that does not belong to the certificate is refused")
    func mismatchedKey() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        let other = try TestFixtures.chain(.ecP256)
        #expect(
            throws: SigningError(
                .keyCertificateMismatch, "the private key does not match the certificate \"\(chain.signer.subject)\"")
        ) {
            try SigningCredentials(key: other.signerKey, certificate: chain.signer)
        }
    }

    @Test("a chain certificate that did not issue the one before it is refused")
    func brokenChain() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        let error = #expect(throws: SigningError.self) {
            try SigningCredentials(key: chain.signerKey, certificate: chain.signer, chain: [chain.root])
        }
        #expect(error?.code == .invalidCertificate)
    }

    @Test("a receipt the payload cannot carry faithfully is refused rather than signed")
    func unfaithfulReceipts() throws {
        let signer = try ReceiptSigner(credentials: TestFixtures.chain(.ecP256).credentials)
        var negativeQuantity = TestFixtures.receipt()
        negativeQuantity.inAppPurchases[0].quantity = -1
        var shortHash = TestFixtures.receipt()
        shortHash.sha1Hash = [1, 2, 3]
        var farFuture = TestFixtures.receipt()
        farFuture.expirationDate = ReceiptDate(millisecondsSince1970: .max)
        var reusedType = TestFixtures.receipt()
        reusedType.unknownAttributes = [
            ReceiptAttribute(type: 17, version: 1, value: TestFixtures.receipt().inAppPurchases[0].payloadDER)
        ]
        for receipt in [negativeQuantity, shortHash, farFuture, reusedType] {
            let error = #expect(throws: SigningError.self) { try signer.sign(receipt) }
            #expect(error?.code == .invalidRequest)
        }
    }

    @Test("signing the same receipt twice with RSA gives the same bytes")
    func deterministicRSA() throws {
        #expect(try TestFixtures.signed(with: .rsa2048) == TestFixtures.signed(with: .rsa2048))
    }
}
