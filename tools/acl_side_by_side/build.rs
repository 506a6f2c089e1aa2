//! Compiles `acl_ffi.cpp` against the ACL and RTM headers named by `ACL_INCLUDE` and
//! `RTM_INCLUDE` (set by `run.sh`), with the flags in `ACL_FLAGS` (AVX2 and FMA by default: ACL's
//! fastest x86 path).
use std::process::Command;

fn main() {
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let need = |v: &str| {
        std::env::var(v)
            .unwrap_or_else(|_| panic!("{v} is not set: run tools/acl_side_by_side/run.sh"))
    };
    let (acl, rtm) = (need("ACL_INCLUDE"), need("RTM_INCLUDE"));
    let flags = std::env::var("ACL_FLAGS").unwrap_or_else(|_| "-mavx2 -mfma -mbmi -mpopcnt".into());
    let object = format!("{out}/acl_ffi.o");
    let status = Command::new("g++")
        .args([
            "-O3",
            "-std=c++17",
            "-fPIC",
            "-DNDEBUG",
            "-c",
            "acl_ffi.cpp",
            "-o",
            &object,
        ])
        .arg(format!("-I{acl}"))
        .arg(format!("-I{rtm}"))
        .args(flags.split_whitespace())
        .status()
        .expect("g++ runs");
    assert!(status.success(), "g++ failed on acl_ffi.cpp");
    let status = Command::new("ar")
        .args(["crs", &format!("{out}/libacl_ffi.a"), &object])
        .status()
        .expect("ar runs");
    assert!(status.success(), "ar failed");
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static=acl_ffi");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    for v in ["ACL_INCLUDE", "RTM_INCLUDE", "ACL_FLAGS"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=acl_ffi.cpp");
}
