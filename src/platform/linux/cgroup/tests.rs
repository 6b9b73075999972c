use super::*;

const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
const CGROUP: &str = "\
9:name=systemd:/
4:memory:/process_api/abc
1:cpu:/
0::/
";

fn parse(mountinfo: &str, cgroup: &str) -> Located {
    let mounts: Vec<MountLine> = entries(mountinfo).collect();
    let groups = ProcessCGroups::from_buf_read(cgroup.as_bytes()).unwrap();
    locate(&mounts, &groups.0)
}

#[test]
fn finds_both_hierarchies_from_mountinfo() {
    let located = parse(MOUNTINFO, CGROUP);
    assert_eq!(
        located.v1,
        Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
    );
    assert_eq!(
        located.v2,
        Some((
            PathBuf::from("/sys/fs/cgroup/unified"),
            PathBuf::from("/sys/fs/cgroup/unified")
        ))
    );
}

#[test]
fn pure_v2_and_container_roots() {
    let mountinfo = "30 23 0:26 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    let located = parse(mountinfo, "0::/lxc/c1/app.scope\n");
    assert_eq!(located.v1, None);
    assert_eq!(
        located.v2,
        Some((
            PathBuf::from("/sys/fs/cgroup"),
            PathBuf::from("/sys/fs/cgroup/app.scope")
        ))
    );
    // A cgroup the mount does not show cannot be used.
    assert_eq!(parse(mountinfo, "0::/lxc/c10\n").v2, None);
    assert_eq!(parse("", "0::/\n"), Located::default());
}

#[test]
fn orphan_names() {
    assert_eq!(owner_pid("oslab-1234-2"), Some(1234));
    assert_eq!(owner_pid("oslab-1234"), None);
    assert_eq!(owner_pid("oslab-x-1"), None);
    assert_eq!(owner_pid("other-1-1"), None);
}

#[test]
fn keyed_files() {
    let map = parse_keyed("oom_kill_disable 0\nunder_oom 0\noom_kill 2\nbogus\n");
    assert_eq!(map.get("oom_kill"), Some(&2));
    assert_eq!(map.len(), 3);
}

#[test]
fn cgroup_dirs() {
    let m = Path::new("/sys/fs/cgroup/memory");
    assert_eq!(
        cgroup_dir(m, "/", "/a/b"),
        Some(PathBuf::from("/sys/fs/cgroup/memory/a/b"))
    );
    assert_eq!(cgroup_dir(m, "/a", "/a"), Some(m.to_path_buf()));
    assert_eq!(cgroup_dir(m, "/a", "/ab"), None);
}

#[test]
fn headroom_is_at_most_what_is_available() {
    // MemAvailable moves between two reads while other programs run (it grew by 268 KiB
    // between them once, under another test suite): bound the headroom by the larger of
    // the readings taken around it.
    let available = || crate::platform::memory::meminfo().unwrap().available;
    let before = available();
    let room = headroom().expect("headroom");
    let most = before.max(available());
    assert!(room > 0 && room <= most, "{room} of {most}");
}
