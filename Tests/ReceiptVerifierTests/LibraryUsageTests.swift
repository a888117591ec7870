import Foundation
import ReceiptCrypto
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

/// The library examples of the README, run as written.
@Suite("README library examples")
struct LibraryUsageTests {
    @Test("verifying a receipt and reading its purchases")
    func verifyExample() throws {
        let receiptBytes = try Vectors.bytes("real/tpinappreceipt/receipt-production.der")
        let appleRoot = try Vectors.bytes("real/apple-pki/AppleIncRootCertificate.cer")

        let verifier = try ReceiptVerifier(trustAnchors: Certificate.load(pemOrDER: appleRoot))
        var products: [String] = []
        do {
            let verified = try verifier.verify(
                receiptBytes, options: VerificationOptions(bundleID: "org.getpure.pure-iphone"))
            for purchase in verified.receipt.inAppPurchases where purchase.cancellationDate == nil {
                products.append(purchase.productID)
            }
        } catch {
            switch error.code {
            case .wrongBundleID, .deviceHashMismatch: Issue.record("not for this app or device: \(error.message)")
            default: Issue.record("rejected (\(error.status)): \(error)")
            }
        }
        #expect(
            products == [
                "org.getpure.pure.Week", "org.getpure.pure.Month", "org.getpure.pure.Month", "org.getpure.pure.Month",
            ])
    }

    @Test("signing a receipt for a purchase")
    func signExample() throws {
        let chain = try DevelopmentChain.create(algorithm: .ecP256)
        let signer = try ReceiptSigner(credentials: chain.credentials)
        let purchase = InAppPurchase(
            productID: "com.example.removeads", transactionID: "1000000000000001",
            purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_588_800_000))
        let receipt = Receipt(
            bundleID: "com.example.game", creationDate: ReceiptDate(millisecondsSince1970: 1_717_588_800_000),
            applicationVersion: "42", inAppPurchases: [purchase])
        let device = try #require(DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))
        let der: [UInt8] = try signer.sign(receipt, boundTo: device)

        let verified = try ReceiptVerifier(trustAnchors: [chain.root])
            .verify(der, options: VerificationOptions(deviceIdentifier: device))
        #expect(verified.receipt.inAppPurchases == [purchase])
    }
}
