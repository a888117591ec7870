import LegacyReceipt
import ReceiptDER
import Testing

@Suite("Tampering with a real receipt")
struct TamperingTests {
    static let file = "cargobay/legacy-autorenew-gagplus.b64"

    static func original() throws -> LegacyTransactionReceipt {
        try LegacyVector.named(file).receipt()
    }

    @Test("changing any byte of the decoded signature blob makes verification fail, never crash")
    func everySignatureBlobByte() throws {
        let receipt = try Self.original()
        let verifier = try Vectors.appleVerifier()
        let blob = try #require(receipt.signature?.blob)
        #expect(blob.count == 988)
        for index in blob.indices {
            var tampered = blob
            tampered[index] ^= 0x01
            let error = legacyError {
                try verifier.verify(rewritten(receipt, signature: tampered))
            }
            let expected: Set<LegacyReceiptError.Code> =
                switch index {
                case 0: [.malformed]  // version 3 needs a 256-byte signature, so the lengths no longer add up
                case 1...128: [.invalidSignature]
                case 129...132: [.malformed]  // the certificate length
                default: [.invalidCertificate, .untrustedChain, .invalidSignature]
                }
            #expect(error.map { expected.contains($0.code) } == true, "byte \(index): \(String(describing: error))")
        }
    }

    @Test("changing a sample of the signed purchase-info bytes makes verification fail, never crash")
    func purchaseInfoBytes() throws {
        let receipt = try Self.original()
        let verifier = try Vectors.appleVerifier()
        let info = receipt.purchaseInfoBytes
        let sample = Array(stride(from: 0, to: info.count, by: 7)) + [info.count - 1]
        for index in sample {
            var tampered = info
            tampered[index] ^= 0x01
            let error = legacyError {
                try verifier.verify(rewritten(receipt, purchaseInfo: tampered))
            }
            let expected: Set<LegacyReceiptError.Code> = [.invalidSignature, .malformed, .invalidField, .missingField]
            #expect(error.map { expected.contains($0.code) } == true, "byte \(index): \(String(describing: error))")
        }
    }

    @Test("appending a byte to the purchase info makes the signature fail")
    func appendedPurchaseInfo() throws {
        let receipt = try Self.original()
        let input = rewritten(receipt, purchaseInfo: receipt.purchaseInfoBytes + [0x0A])
        #expect(legacyError { try Vectors.appleVerifier().verify(input) }?.code == .invalidSignature)
    }

    @Test("the purchase info of one real receipt under the signature of another does not verify")
    func swappedSignature() throws {
        let receipt = try Self.original()
        let other = try LegacyVector.named("cargobay/legacy-nonconsumable.b64").receipt()
        let input = rewritten(receipt, signature: try #require(other.signature?.blob))
        #expect(legacyError { try Vectors.appleVerifier().verify(input) }?.code == .invalidSignature)
    }

    @Test("the top-level fields are not signed: the receipt rewritten with another environment still verifies")
    func unsignedEnvironment() throws {
        let receipt = try Self.original()
        let input = rewritten(receipt, setting: "environment", to: "Production")
        let verified = try Vectors.appleVerifier().verify(input)
        #expect(verified.receipt.environment == "Production")
        #expect(verified.purchaseInfo == receipt.purchaseInfo)
    }

    @Test("a signing-status other than 0 is refused")
    func signingStatus() throws {
        let input = rewritten(try Self.original(), setting: "signing-status", to: "1")
        let error = legacyError { try Vectors.appleVerifier().verify(input) }
        #expect(error?.code == .signingStatus)
    }

    @Test("a receipt without signing-status is still verified")
    func absentSigningStatus() throws {
        let input = rewritten(try Self.original(), setting: "signing-status", to: nil)
        #expect(try Vectors.appleVerifier().verify(input).receipt.signingStatus == nil)
    }
}
