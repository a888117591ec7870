import LegacyReceipt
import ReceiptCrypto
import ReceiptJWS
import ReceiptModel
import ReceiptVerifier

/// One entry point for every purchase proof: it detects the format (``PurchaseProofFormat/detect(_:)``) and
/// verifies with that format's verifier, all pinned to the same anchors. App receipts and iOS 6 receipts chain to
/// Apple Inc. Root, StoreKit 2 data to Apple Root CA - G3; pin what you accept.
public struct PurchaseVerifier: Sendable {
    public private(set) var receipts: ReceiptVerifier
    public let signedData: JWSVerifier
    public let legacyReceipts: LegacyReceiptVerifier

    /// - Parameters:
    ///   - intermediates: issuers that iOS 6 receipts do not carry (`certs/apple/AppleITunesStoreCertificationAuthority.cer`
    ///     and `AppleWWDRCA.cer` for Apple's).
    ///   - limits: bounds on each input; the input size applies to every format.
    /// - Throws: ``CryptoError`` when no anchor is given.
    public init(
        trustAnchors: [Certificate],
        intermediates: [Certificate] = [],
        limits: VerificationLimits = VerificationLimits()
    ) throws(CryptoError) {
        receipts = try ReceiptVerifier(trustAnchors: trustAnchors, limits: limits)
        signedData = try JWSVerifier(trustAnchors: trustAnchors, maximumSize: limits.maximumInputSize)
        legacyReceipts = try LegacyReceiptVerifier(
            trustAnchors: trustAnchors, intermediates: intermediates, maximumSize: limits.maximumInputSize)
    }

    /// This verifier with the app receipts' caches of its own (``ReceiptVerifier/withOwnCaches()``): one per thread
    /// of a batch.
    public func withOwnCaches() -> PurchaseVerifier {
        var copy = self
        copy.receipts = receipts.withOwnCaches()
        return copy
    }

    /// Verifies `input` in whichever format it is. `options.bundleID` and `options.validationTime` apply to every
    /// format; `applicationVersion` and `deviceIdentifier` exist only in app receipts, and asking for them on
    /// another format is an error (``PurchaseProofError/uncheckableOption(_:option:)``).
    public func verify(_ input: [UInt8], options: VerificationOptions = VerificationOptions())
        throws(PurchaseProofError) -> VerifiedPurchaseProof
    {
        try verify(input, as: PurchaseProofFormat.detect(input), options: options)
    }

    /// Verifies `input` as `format`, for a caller that has detected it already (``PurchaseProofFormat/detect(_:)``)
    /// and needs it again, to label a failure, without detecting twice. Given another format than the input's, it
    /// fails as that format would: no format's verifier accepts what it cannot verify.
    public func verify(
        _ input: [UInt8], as format: PurchaseProofFormat, options: VerificationOptions = VerificationOptions()
    ) throws(PurchaseProofError) -> VerifiedPurchaseProof {
        if format != .appReceipt {
            if options.applicationVersion != nil { throw .uncheckableOption(format, option: "application version") }
            if options.deviceIdentifier != nil { throw .uncheckableOption(format, option: "device binding") }
        }
        switch format {
        case .unrecognized: throw .unrecognized(PurchaseProofFormat.describeUnrecognized(input))
        case .appReceipt:
            do {
                return .appReceipt(try receipts.verify(input, options: options))
            } catch {
                throw .appReceipt(error)
            }
        case .signedData:
            do {
                return try signedDataProof(input, options: options)
            } catch {
                throw .signedData(error)
            }
        case .serverNotification:
            do {
                return .serverNotification(
                    try signedData.verifyNotification(
                        input, expecting: JWSExpectations(bundleID: options.bundleID), at: options.validationTime))
            } catch {
                throw .signedData(error)
            }
        case .legacyTransactionReceipt:
            do throws(LegacyReceiptError) {
                let verified = try legacyReceipts.verify(input, at: options.validationTime)
                if let expected = options.bundleID, verified.purchaseInfo.bundleID != expected {
                    throw LegacyReceiptError(
                        .invalidField,
                        "purchase-info bid is \(verified.purchaseInfo.bundleID ?? "absent"), expected \"\(expected)\"")
                }
                return .legacyTransactionReceipt(verified)
            } catch {
                throw .legacyTransactionReceipt(error)
            }
        }
    }

    private func signedDataProof(_ input: [UInt8], options: VerificationOptions) throws(JWSError)
        -> VerifiedPurchaseProof
    {
        let verified = try signedData.verify(input, at: options.validationTime)
        let expectations = JWSExpectations(bundleID: options.bundleID)
        switch SignedDataKind.of(verified.payload) {
        case .transaction: return .signedTransaction(try verified.transaction(expecting: expectations), verified)
        case .appTransaction:
            return .signedAppTransaction(try verified.appTransaction(expecting: expectations), verified)
        case .notification:
            return .serverNotification(
                try signedData.verifyNotification(
                    signedPayload: input, expecting: expectations, at: options.validationTime))
        case .renewalInfo, .other:
            // Renewal info (and unknown payloads) carry no bundleId to hold the caller's bundle id against.
            if let expected = options.bundleID, verified.payload["bundleId"] != .string(expected) {
                throw JWSError(.wrongBundleID, "payload.bundleId is not \"\(expected)\"")
            }
            if SignedDataKind.of(verified.payload) == .renewalInfo {
                return .signedRenewalInfo(try verified.renewalInfo(expecting: expectations), verified)
            }
            return .otherSignedData(verified)
        }
    }
}

extension PurchaseVerifier {
    /// Verifies many proofs, each in its own format, on `threads` threads; the results come back in input order.
    /// Call it on successive chunks to keep memory flat over an unbounded stream.
    public func verify(
        many inputs: [[UInt8]],
        options: VerificationOptions = VerificationOptions(),
        threads: Int = ReceiptVerifier.defaultThreadCount
    ) -> [Result<VerifiedPurchaseProof, PurchaseProofError>] {
        InputOrder.map(inputs, threads: threads) { input in
            Result { () throws(PurchaseProofError) in try verify(input, options: options) }
        }
    }
}
