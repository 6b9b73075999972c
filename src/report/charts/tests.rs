use super::*;

#[test]
fn axes_are_nice() {
    let a = Axis::covering(&[3.0, 4000.0], Scale::Log, Unit::Decimal, 0.0, 100.0);
    assert_eq!((a.lo, a.hi), (1.0, 10_000.0));
    assert_eq!(a.ticks.len(), 5);
    assert_eq!(a.px(100.0), 50.0);
    let l = Axis::covering(&[0.3, 7.0], Scale::Linear, Unit::Decimal, 0.0, 100.0);
    assert_eq!((l.lo, l.hi), (0.0, 8.0));
    assert_eq!(l.ticks, [0.0, 2.0, 4.0, 6.0, 8.0]);
    let kib = Axis::covering(&[8520.0, 9270.0], Scale::Linear, Unit::Binary, 0.0, 300.0);
    assert_eq!((kib.lo, kib.hi), (0.0, 10240.0));
    assert_eq!(Scale::suited([1.0, 100.0].into_iter()), Scale::Log);
    assert_eq!(Scale::suited([1.0, 3.0].into_iter()), Scale::Linear);
}

#[test]
fn text_is_escaped() {
    assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    let svg = hbars(
        "t",
        "t",
        &[Bar {
            label: "x<y".into(),
            value: Some(2.0),
            whisker: Some((1.5, 2.5)),
            text: "2".into(),
            title: "two".into(),
            class: "ok".into(),
            dots: vec![
                Dot {
                    value: 1.8,
                    title: "process 1 <of 2>".into(),
                    left_out: false,
                },
                Dot {
                    value: 2.2,
                    title: "left out".into(),
                    left_out: true,
                },
            ],
        }],
        Scale::Linear,
        Unit::Decimal,
        &|v| format!("{v}"),
        WIDTH,
    );
    assert!(svg.contains("x&lt;y") && svg.ends_with("</svg>"));
    assert!(svg.contains(r#"class="process""#) && svg.contains("process 1 &lt;of 2&gt;"));
    assert_eq!(
        svg.matches(r#"class="process left-out""#).count(),
        1,
        "{svg}"
    );
}

#[test]
fn tick_labels_lose_trailing_zeros() {
    assert_eq!(tidy("50.0 ns"), "50 ns");
    assert_eq!(tidy("2.50 µs"), "2.5 µs");
    assert_eq!(tidy("2.0e-6"), "2e-6");
    assert_eq!(tidy("0.200"), "0.2");
    assert_eq!(tidy("1.95 MiB"), "1.95 MiB");
    assert_eq!(tidy("100 ns"), "100 ns");
}

#[test]
fn labels_do_not_overlap() {
    let wide = Axis::covering(&[0.0, 160_000.0], Scale::Linear, Unit::Binary, 0.0, 600.0);
    let labels: Vec<String> = wide.ticks.iter().map(|t| format!("{t} KiB")).collect();
    assert_eq!(label_stride(&wide, &labels), 1);
    let narrow = Axis::covering(&[0.0, 160_000.0], Scale::Linear, Unit::Binary, 0.0, 200.0);
    assert_eq!(narrow.ticks.len(), 6);
    let labels = ["0 KiB", "32 MiB", "64 MiB", "96 MiB", "128 MiB", "160 MiB"].map(String::from);
    assert_eq!(label_stride(&narrow, &labels), 2);
}
