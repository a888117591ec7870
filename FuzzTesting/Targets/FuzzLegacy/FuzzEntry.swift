import FuzzChecks

/// libFuzzer's start: certificates' keys read as `receipt verify` reads them.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: OpaquePointer?) -> CInt {
    FuzzChecks.readCertificateKeysAsReceiptVerifyDoes()
    return 0
}

/// libFuzzer's entry point: runs the FuzzLegacy check and stops the fuzzer on a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let finding = FuzzChecks.legacyTargets["FuzzLegacy"]?(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("FuzzLegacy: \(finding)")
    }
    return 0
}
