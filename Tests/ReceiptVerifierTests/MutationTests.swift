import ReceiptCrypto
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

/// Valid receipts mutated thousands of times: no crash, no hang, and a mutant that still verifies reports exactly
/// the original receipt (BER allows a few equivalent spellings of the envelope; none may change what it says).
@Suite("Mutated receipts")
struct MutationTests {
    struct Subject: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let anchor: Certificate
        var testDescription: String { name }
    }

    static let subjects: [Subject] = {
        var subjects: [Subject] = []
        if let chain = try? TestFixtures.chain(.ecP256), let ours = try? TestFixtures.signed(with: .ecP256) {
            subjects.append(Subject(name: "ours (EC)", bytes: ours, anchor: chain.root))
        }
        if let xcode = try? Vectors.bytes("real/tpinappreceipt/receipt-xcode.der"),
            let storeKit = try? Vectors.certificate("real/tpinappreceipt/StoreKitTestCertificate.cer")
        {
            subjects.append(Subject(name: "Xcode (BER)", bytes: xcode, anchor: storeKit))
        }
        if let apple = try? Vectors.bytes("real/appreceiptvalidator/hannes_mac_mindnode_receipt.der"),
            let root = try? Vectors.certificate("real/apple-pki/AppleIncRootCertificate.cer")
        {
            subjects.append(Subject(name: "Apple (DER)", bytes: apple, anchor: root))
        }
        return subjects
    }()

    /// A small deterministic generator, so that a failure names a reproducible mutant.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutate(_ bytes: [UInt8], _ generator: inout SplitMix) -> [UInt8] {
        var copy = bytes
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = Int.random(in: 0..<max(copy.count, 1), using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0 where !copy.isEmpty: copy[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
            case 1 where !copy.isEmpty: copy[position] = UInt8.random(in: 0...255, using: &generator)
            case 2 where !copy.isEmpty: copy.remove(at: position)
            case 3: copy.insert(UInt8.random(in: 0...255, using: &generator), at: position)
            default:
                let length = Int.random(in: 1...16, using: &generator)
                let start = Int.random(in: 0..<max(copy.count, 1), using: &generator)
                copy.insert(contentsOf: copy[start..<min(start + length, copy.count)], at: position)
            }
        }
        return copy
    }

    @Test(
        "5000 random mutants: none crashes, and any that verifies says exactly what the original said",
        arguments: subjects)
    func randomMutants(_ subject: Subject) throws {
        let verifier = try ReceiptVerifier(trustAnchors: [subject.anchor])
        let original = try verifier.verify(subject.bytes).receipt
        var generator = SplitMix(state: 0x5EED)
        var stillValid = 0
        for round in 0..<5000 {
            let mutant = Self.mutate(subject.bytes, &generator)
            guard let verified = try? verifier.verify(mutant) else { continue }
            stillValid += 1
            #expect(verified.receipt == original, "mutant \(round) verifies with different content")
        }
        #expect(stillValid < 5000)
    }

    @Test("every single-bit flip of our receipt is refused or changes nothing")
    func everyBitFlip() throws {
        let subject = try #require(Self.subjects.first)
        let verifier = try ReceiptVerifier(trustAnchors: [subject.anchor])
        let original = try verifier.verify(subject.bytes).receipt
        for offset in subject.bytes.indices {
            for bit in 0..<8 {
                var copy = subject.bytes
                copy[offset] ^= UInt8(1 << bit)
                if let verified = try? verifier.verify(copy) {
                    #expect(verified.receipt == original, "bit \(bit) of byte \(offset)")
                }
            }
        }
    }
}
