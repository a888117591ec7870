import CReceiptMalloc
import Glibc
import ReceiptCrypto

// Memory freed is kept for the next allocations rather than given back at once. With glibc's defaults a thread gave
// its freed memory back to the kernel whenever 128 KiB lay free at the top of its heap, and blocks from 128 KiB up
// were mapped and unmapped one by one: `receipt verify DIR --json` over Apple's 187-purchase receipts (95 KB of JSON
// a line) spent 0.19-0.25 s of every 0.5 s in the kernel, giving pages back, faulting them in again and interrupting
// the other core at every return, and 0.04-0.05 s with these settings, at the same peak memory (15 MiB).
mallopt(M_MMAP_THRESHOLD, 1 << 20)
mallopt(M_TRIM_THRESHOLD, 4 << 20)
// OpenSSL's error texts loaded when a failure is described, and its table of ciphers by name not built, rather than
// both at every start (0.7 ms of a 4.9 ms `receipt verify FILE`): before anything uses OpenSSL.
OpenSSLStart.leaveOutUnusedTables()
// Everything `receipt` prints is written with write(2) as it goes, and what a command opens it closes before
// returning or leaves to the process's end (KeptUntilExit): the exit handlers left (OpenSSL freeing its providers and
// caches) only give back memory the kernel takes back at once, about 0.2 ms of every run.
_exit(CommandLineInterface.run(Array(CommandLine.arguments.dropFirst())).rawValue)
