import ReceiptCrypto
import Testing

/// A certificate's validity period, read as seconds since 1970 from both ASN.1 time forms.
@Suite("Certificate dates")
struct CertificateDatesTests {
    @Test("Apple's root (UTCTime) is valid from 2006-04-25 21:40:36 to 2035-02-09 21:40:36 UTC")
    func appleRootUTCTime() throws {
        let root = try Vectors.certificate("real/apple-pki/AppleIncRootCertificate.cer")
        #expect(root.notBefore == 1_146_001_236)
        #expect(root.notAfter == 2_054_670_036)
    }

    @Test("a time before 1970 (UTCTime 1960) and one from 2050 on (GeneralizedTime) read back as issued")
    func beforeEpochAndGeneralizedTime() throws {
        let key = try PrivateKey.generate(.ecP256)
        let issued = try CertificateIssuer.issue(
            commonName: "Dates", organization: "Tests", role: .root, subjectKey: key, issuer: nil,
            notBefore: -315_619_200, notAfter: 2_556_144_000)
        let decoded = try Certificate(derEncoded: issued.derEncoded)
        #expect(decoded.notBefore == -315_619_200)
        #expect(decoded.notAfter == 2_556_144_000)
    }
}
