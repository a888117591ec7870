import LegacyReceipt
import ReceiptCrypto
import ReceiptModel
import Testing

/// Receipts signed in the tests with a throw-away RSA chain, for the rules real receipts cannot break.
@Suite("Legacy receipts signed by a test chain")
struct SignedReceiptTests {
    @Test("a version 3 receipt signed by our own RSA-2048 chain verifies under its root, without Apple's markers")
    func ownChainVerifies() throws {
        let chain = try TestChain.rsa.get()
        let verified = try chain.verifier().verify(chain.receipt())
        #expect(verified.chain == [chain.leaf, chain.intermediate, chain.root])
        #expect(verified.validationTime == ReceiptDate(millisecondsSince1970: 1_717_588_800_000))
        #expect(verified.purchaseInfo.productID == "com.example.coins")
    }

    @Test("the validation time the caller gives replaces the purchase date")
    func explicitTime() throws {
        let chain = try TestChain.rsa.get()
        let time = ReceiptDate(secondsSince1970: 2_000_000_000)
        #expect(try chain.verifier().verify(chain.receipt(), at: time).validationTime == time)
    }

    @Test("a version 2 signature with an RSA-2048 leaf is refused: version 2 means RSA-1024")
    func keySizeMustMatchVersion() throws {
        let chain = try TestChain.rsa.get()
        let blob = signatureBlob(
            version: 2, signature: [UInt8](repeating: 1, count: 128), certificate: chain.leaf.derEncoded)
        let input = receiptText(signature: blob, purchaseInfo: TestChain.purchaseInfo)
        let error = legacyError { try chain.verifier().verify(Array(input.utf8)) }
        #expect(error?.code == .invalidSignature)
        #expect(error?.message.contains("RSA-1024 with SHA-1, but the leaf's key is RSA-2048") == true)
    }

    @Test("a leaf with an EC key is refused: legacy receipts are RSA")
    func ecLeaf() throws {
        let chain = try TestChain.make(leafAlgorithm: .ecP256)
        let blob = signatureBlob(
            version: 3, signature: [UInt8](repeating: 1, count: 256), certificate: chain.leaf.derEncoded)
        let input = receiptText(signature: blob, purchaseInfo: TestChain.purchaseInfo)
        let error = legacyError { try chain.verifier().verify(Array(input.utf8)) }
        #expect(error?.code == .invalidSignature)
        #expect(error?.message.contains("EC P-256") == true)
    }

    @Test("a signing-status other than 0 is refused even when the signature verifies")
    func signingStatus() throws {
        let chain = try TestChain.rsa.get()
        let error = legacyError {
            try chain.verifier().verify(chain.receipt(signingStatus: "2"))
        }
        #expect(error?.code == .signingStatus)
    }

    @Test(
        "a signed purchase without bid, product-id, transaction-id, quantity or purchase date is missing a field",
        arguments: ["bid", "product-id", "transaction-id", "quantity", "purchase-date-ms"])
    func requiredFields(_ key: String) throws {
        let chain = try TestChain.rsa.get()
        let info = TestChain.purchaseInfo.split(separator: "\n").filter { !$0.contains("\"\(key)\"") }
            .joined(separator: "\n")
        let error = legacyError {
            try chain.verifier().verify(chain.receipt(purchaseInfo: info))
        }
        #expect(error?.code == .missingField)
        #expect(error?.message.contains(key) == true)
    }

    @Test("a verifier without anchors cannot be made")
    func noAnchors() {
        #expect(throws: CryptoError.self) { try LegacyReceiptVerifier(trustAnchors: [], intermediates: []) }
    }

    @Test("Apple's markers are required per version: 6.5.1 under 6.2.2 for version 2, 6.11.1 under 6.2.1 for 3")
    func markers() {
        #expect(LegacyReceiptVerifier.Markers.required(forVersion: 2)?.leaf.description == "1.2.840.113635.100.6.5.1")
        #expect(
            LegacyReceiptVerifier.Markers.required(forVersion: 2)?.intermediate.description
                == "1.2.840.113635.100.6.2.2")
        #expect(LegacyReceiptVerifier.Markers.required(forVersion: 3)?.leaf.description == "1.2.840.113635.100.6.11.1")
        #expect(
            LegacyReceiptVerifier.Markers.required(forVersion: 3)?.intermediate.description
                == "1.2.840.113635.100.6.2.1")
    }
}
