@testable import ReceiptCMS
import ReceiptDER
import ReceiptSigner
import Testing

/// `CMSSignedData(berEncoded:)` reads the common envelope directly from strict DER and everything else through
/// ASN.1 nodes. The two readings must never disagree, or a receipt would read differently by how it is spelled.
@Suite("Envelope reading: direct DER and ASN.1 nodes")
struct EnvelopeReadingTests {
    /// Every receipt here in DER (base64 vectors decoded), ours plain and compressed, and one with signed attributes.
    static let receipts: [(name: String, der: [UInt8])] = {
        var receipts: [(String, [UInt8])] = []
        for vector in RealReceipt.all {
            guard let bytes = try? Vectors.bytes("real/" + vector.file) else { continue }
            let der = bytes.first == 0x30 ? bytes : (try? Base64.decode(bytes)) ?? bytes
            receipts.append((vector.file, der))
        }
        if let chain = try? TestFixtures.chain(.ecP256), let signer = try? ReceiptSigner(credentials: chain.credentials)
        {
            receipts.append(("ours (EC)", (try? signer.sign(TestFixtures.receipt())) ?? []))
            receipts.append(("ours, compressed", (try? signer.sign(TestFixtures.receipt(), compressed: true)) ?? []))
            var withAttributes = EnvelopeBuilder(payload: TestFixtures.receipt().payloadDER, chain: chain)
            withAttributes.signedAttributes = withAttributes.correctSignedAttributes()
            receipts.append(("signed attributes", (try? withAttributes.build()) ?? []))
        }
        if let rsa = try? TestFixtures.signed(with: .rsa2048) { receipts.append(("ours (RSA)", rsa)) }
        return receipts
    }()

    /// Whether the ContentInfo has an indefinite length, as Xcode's StoreKit-testing receipts do.
    static func isBER(_ der: [UInt8]) -> Bool { der.starts(with: [0x30, 0x80]) }

    /// Both readings of `bytes`: equal values with slices at the same positions, or the same error.
    static func expectAgreement(_ bytes: [UInt8], maximumDepth: Int = ASN1Reader.defaultMaximumDepth) {
        let nodes = Result { () throws(CMSError) in
            try CMSSignedData(readingNodes: bytes[...], maximumDepth: maximumDepth)
        }
        guard let direct = CMSSignedData(strictDER: bytes[...], maximumDepth: maximumDepth) else { return }
        guard case .success(let expected) = nodes else {
            Issue.record("the direct reading accepted what the node reading refuses: \(nodes)")
            return
        }
        #expect(direct == expected)
        #expect(direct.content?.indices == expected.content?.indices)
        #expect(direct.certificates.map(\.indices) == expected.certificates.map(\.indices))
        #expect(direct.signerInfos.map(\.signature.indices) == expected.signerInfos.map(\.signature.indices))
    }

    @Test("Apple's DER receipts and ours are read directly, and read as the node reader reads them")
    func commonReceiptsReadDirectly() throws {
        for (name, der) in Self.receipts where !Self.isBER(der) && name != "signed attributes" {
            #expect(CMSSignedData(strictDER: der[...], maximumDepth: 32) != nil, "\(name)")
            Self.expectAgreement(der)
        }
    }

    @Test("BER envelopes (Xcode's) and signed attributes are left to the node reader")
    func otherShapesUseNodes() {
        let others = Self.receipts.filter { Self.isBER($0.der) || $0.name == "signed attributes" }
        #expect(others.count >= 4)
        for (name, der) in others {
            #expect(CMSSignedData(strictDER: der[...], maximumDepth: 32) == nil, "\(name)")
        }
    }

    @Test("a depth limit too small for the whole envelope is left to the node reader, which enforces it")
    func smallDepthLimits() {
        for (_, der) in Self.receipts {
            for depth in 0...10 { Self.expectAgreement(der, maximumDepth: depth) }
        }
    }

    @Test("thousands of mutants of every receipt read the same both ways", arguments: 0..<4)
    func mutants(seed: UInt64) {
        var generator = MutationTests.SplitMix(state: seed)
        for (_, der) in Self.receipts {
            for _ in 0..<500 { Self.expectAgreement(MutationTests.mutate(der, &generator)) }
        }
    }

    @Test("every truncation of our receipt reads the same both ways")
    func truncations() throws {
        let der = try TestFixtures.signed(with: .ecP256)
        for length in 0...der.count { Self.expectAgreement(Array(der.prefix(length))) }
    }
}
