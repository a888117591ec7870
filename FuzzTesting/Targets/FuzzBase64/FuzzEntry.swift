import FuzzChecks

/// libFuzzer's entry point: runs the FuzzBase64 check and stops the fuzzer on a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let finding = FuzzChecks.targets["FuzzBase64"]?(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("FuzzBase64: \(finding)")
    }
    return 0
}
