import FuzzChecks

/// libFuzzer's entry point: runs the FuzzCatalog check and stops the fuzzer on a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let finding = FuzzChecks.targets["FuzzCatalog"]?(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("FuzzCatalog: \(finding)")
    }
    return 0
}
