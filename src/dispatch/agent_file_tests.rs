use super::*;

fn unsafe_note(result: Result<Vec<u8>, Refused>) -> String {
    match result {
        Err(Refused::Unsafe(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_regular_file_is_read_and_a_missing_one_is_no_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    std::fs::write(dir.path().join("scratch/m.txt"), "review").unwrap();
    assert_eq!(
        read(dir.path(), Path::new("scratch/m.txt"), 100).unwrap(),
        b"review"
    );
    let missing = read(dir.path(), Path::new("scratch/none.txt"), 100).unwrap_err();
    assert_eq!(missing, Refused::Missing);
    assert_eq!(missing.note(), None);
}

#[test]
fn links_fifos_devices_climbing_and_oversize_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("secret"), "key").unwrap();
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::write(root.join("real/m.txt"), "key").unwrap();
    std::os::unix::fs::symlink(root.join("secret"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("linked")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(root.join("big"), vec![b'x'; 101]).unwrap();

    assert!(unsafe_note(read(root, Path::new("link.txt"), 100)).contains("symbolic link"));
    assert!(unsafe_note(read(root, Path::new("linked/m.txt"), 100)).contains("symbolic link"));
    assert!(unsafe_note(read(root, Path::new("zero"), 100)).contains("symbolic link"));
    assert!(unsafe_note(read(root, Path::new("fifo"), 100)).contains("FIFO"));
    assert!(unsafe_note(read(root, Path::new("real"), 100)).contains("directory"));
    assert!(unsafe_note(read(root, Path::new("big"), 100)).contains("larger than 100 bytes"));
    assert!(unsafe_note(read(root, Path::new("../secret"), 100)).contains("leaves"));
    assert!(unsafe_note(read(root, Path::new("/etc/passwd"), 100)).contains("leaves"));
    // Exactly the cap is fine.
    assert_eq!(read(root, Path::new("big"), 101).unwrap().len(), 101);
}

#[test]
fn removal_follows_no_linked_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("elsewhere")).unwrap();
    std::fs::write(root.join("elsewhere/m.txt"), "user's").unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere"), root.join("scratch")).unwrap();
    assert!(remove(root, Path::new("scratch/m.txt")).is_err());
    assert!(root.join("elsewhere/m.txt").exists());
    std::fs::create_dir(root.join("own")).unwrap();
    std::fs::write(root.join("own/m.txt"), "stale").unwrap();
    remove(root, Path::new("own/m.txt")).unwrap();
    assert!(!root.join("own/m.txt").exists());
    remove(root, Path::new("own/m.txt")).unwrap();
}
