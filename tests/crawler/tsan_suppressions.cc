// ThreadSanitizer suppressions for the crawler test binaries (crawler_tests, crawler_e2e_tests,
// crawler_redis_tests: tests/CMakeLists.txt links this file into each).
//
// Debian's libcpp-httplib is a prebuilt, uninstrumented shared library. Its function-local static
// std::regex objects are initialized under a guard whose fast-path acquire load TSan cannot see, so
// two server worker threads reading one of them is reported as a race inside the library
// (memcpy/memcmp called from libcpp-httplib.so). called_from_lib ignores only accesses the library
// itself makes; our own code stays fully checked.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libcpp-httplib.so\n";
}
#endif
