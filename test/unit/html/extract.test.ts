import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ExtractedLink, extractPage, type PageFacts } from '../../../functions/core/html/extract.ts';

const PAGE = 'https://example.test/docs/guide/page.html';

function facts(html: string, options?: { text?: boolean; agent?: string }): PageFacts {
  return extractPage(html, PAGE, options);
}

function hrefs(html: string): string[] {
  return facts(html).links.map((l) => l.href);
}

function link(href: string, tag: string, kind: ExtractedLink['kind'], nofollow = false): ExtractedLink {
  return { href, kind, tag, nofollow };
}

describe('extractPage: link sources', () => {
  it('a and area href', () => {
    assert.deepEqual(facts('<a href="/a">x</a><map><area shape=rect href="b.html"></map>').links, [
      link('/a', 'a', 'page'),
      link('b.html', 'area', 'page'),
    ]);
  });

  it('link href, every rel', () => {
    const html = [
      '<link rel="stylesheet" href="/s.css">',
      '<link rel="icon" href="/favicon.ico">',
      '<link rel="shortcut icon" href="/fav.png">',
      '<link rel="canonical" href="https://example.test/c">',
      '<link rel="alternate" hreflang="de" href="/de/">',
      '<link rel="alternate" type="application/rss+xml" href="/feed.xml">',
      '<link rel="next" href="p2.html"><link rel="prev" href="p0.html">',
      '<link rel="preload" as="font" href="/f.woff2">',
      '<link rel="manifest" href="/site.webmanifest">',
    ].join('');
    assert.deepEqual(facts(html).links, [
      link('/s.css', 'link', 'other'),
      link('/favicon.ico', 'link', 'image'),
      link('/fav.png', 'link', 'image'),
      link('https://example.test/c', 'link', 'page'),
      link('/de/', 'link', 'page'),
      link('/feed.xml', 'link', 'other'),
      link('p2.html', 'link', 'page'),
      link('p0.html', 'link', 'page'),
      link('/f.woff2', 'link', 'other'),
      link('/site.webmanifest', 'link', 'other'),
    ]);
  });

  it('SVG links, href and xlink:href', () => {
    assert.deepEqual(hrefs('<svg><a xlink:href="old.html"><text>x</text></a><a href="new.html"/></svg>'), [
      'old.html',
      'new.html',
    ]);
  });

  it('iframe and frame src', () => {
    assert.deepEqual(
      facts('<iframe src="embed.html"></iframe><frameset><frame src="f.html"></frameset>').links,
      [link('embed.html', 'iframe', 'page'), link('f.html', 'frame', 'page')],
    );
  });

  it('img src and srcset, but not data-src', () => {
    const html =
      '<img data-src="lazy.png" src="a.png" srcset="a-2x.png 2x, a-3x.png 3x" data-srcset="lazy-2x.png 2x">';
    assert.deepEqual(facts(html).links, [
      link('a.png', 'img', 'image'),
      link('a-2x.png', 'img', 'image'),
      link('a-3x.png', 'img', 'image'),
    ]);
  });

  it('img is an image whatever its extension', () => {
    assert.deepEqual(facts('<img src="/render?id=3">').links, [link('/render?id=3', 'img', 'image')]);
  });

  it('source src and srcset: images in picture, other in video/audio', () => {
    const html = [
      '<picture><source type="image/avif" srcset="h.avif 1x, h2.avif 2x"><img src="h.jpg"></picture>',
      '<video poster="p.jpg"><source src="movie.webm"><source src="/stream/1"><track src="subs.vtt"></video>',
      '<audio src="a.mp3"></audio>',
    ].join('');
    assert.deepEqual(facts(html).links, [
      link('h.avif', 'source', 'image'),
      link('h2.avif', 'source', 'image'),
      link('h.jpg', 'img', 'image'),
      link('movie.webm', 'source', 'other'),
      link('/stream/1', 'source', 'other'),
      link('subs.vtt', 'track', 'other'),
      link('a.mp3', 'audio', 'other'),
    ]);
  });

  it('script src (body ignored), embed src, object data', () => {
    const html = '<script src="/app.js"></script><embed src="movie.swf"><object data="/paper.pdf"></object>';
    assert.deepEqual(facts(html).links, [
      link('/app.js', 'script', 'other'),
      link('movie.swf', 'embed', 'other'),
      link('/paper.pdf', 'object', 'document'),
    ]);
  });

  it('links are classified by extension', () => {
    const html =
      '<a href="r.pdf">1</a><a href="/x/Y.DOCX?dl=1">2</a><a href="p.png#z">3</a><a href="z.tar.gz">4</a><a href="https://example.org">5</a>';
    assert.deepEqual(
      facts(html).links.map((l) => l.kind),
      ['document', 'document', 'image', 'other', 'page'],
    );
  });
});

describe('extractPage: attribute syntax', () => {
  it('every quoting style', () => {
    assert.deepEqual(
      hrefs(`<a href="d.html">1</a><a href='s.html'>2</a><a href=u.html>3</a><a href = "sp.html">4</a>`),
      ['d.html', 's.html', 'u.html', 'sp.html'],
    );
  });

  it('upper-case tags and attributes', () => {
    assert.deepEqual(hrefs('<A HREF="/UP">x</A><IMG SRC=I.PNG><LINK REL=NEXT HREF=n.html>'), [
      '/UP',
      'I.PNG',
      'n.html',
    ]);
  });

  it('entities are decoded', () => {
    assert.deepEqual(
      hrefs('<a href="?a=1&amp;b=2">1</a><a href="/x?q=a&#38;b&#x3D;c">2</a><a href="/caf&eacute;">3</a>'),
      ['?a=1&b=2', '/x?q=a&b=c', '/café'],
    );
  });

  it('legacy entities without a semicolon in attributes follow the HTML rules', () => {
    // "&copy" followed by "=" stays literal in an attribute; "&amp" before "b" is "&" only in text.
    assert.deepEqual(hrefs('<a href="?x=1&copy=2">1</a>'), ['?x=1&copy=2']);
    assert.deepEqual(hrefs('<a href="?x=1&amp;copy=2">2</a>'), ['?x=1&copy=2']);
    // Both spell one href: the page's distinct links keep it once.
    assert.deepEqual(hrefs('<a href="?x=1&copy=2">1</a><a href="?x=1&amp;copy=2">2</a>'), ['?x=1&copy=2']);
  });

  it('surrounding whitespace is trimmed, but not inside', () => {
    assert.deepEqual(hrefs('<a href="\n\t  /a b.html  \r\n">x</a>'), ['/a b.html']);
  });

  it('the first of duplicate attributes wins', () => {
    assert.deepEqual(hrefs('<a href="first.html" href="second.html">x</a>'), ['first.html']);
  });

  it('empty and missing values yield nothing', () => {
    assert.deepEqual(hrefs('<a href="">e</a><a href>m</a><a name="top">n</a><img src=" "><img alt="x">'), []);
  });

  it('fragment-only links are kept (the canonicalizer removes fragments)', () => {
    assert.deepEqual(hrefs('<a href="#top">t</a>'), ['#top']);
  });
});

describe('extractPage: what yields nothing', () => {
  it('comments, script, style, textarea and title bodies', () => {
    const html = [
      '<!-- <a href="c1.html">x</a> -->',
      '<!--[if IE]><a href="c2.html">x</a><![endif]-->',
      '<script>document.write(\'<a href="s1.html">x</a>\'); var s = "<img src=s2.png>";</script>',
      '<script type="text/template"><a href="s3.html">x</a></script>',
      '<style>a { background: url("st.png") } /* <a href="st.html"> */</style>',
      '<textarea><a href="ta.html">x</a></textarea>',
      '<title><a href="t.html">x</a></title>',
      '<a href="ok.html">ok</a>',
    ].join('\n');
    assert.deepEqual(hrefs(html), ['ok.html']);
  });

  it('non-http schemes', () => {
    const html = [
      '<a href="javascript:void(0)">1</a>',
      '<a href="JavaScript:alert(1)">2</a>',
      '<a href="  javascript:x">3</a>',
      '<a href="java&#10;script:x">4</a>',
      '<a href="mailto:a@example.test">5</a>',
      '<a href="tel:+15551234">6</a>',
      '<img src="data:image/png;base64,AAAA">',
      '<a href="about:blank">8</a>',
      '<iframe src="blob:https://example.test/uuid"></iframe>',
      '<a href="vbscript:msgbox">10</a>',
      '<a href="ftp://example.test/f">11</a>',
      '<a href="HTTPS://example.test/ok">12</a>',
      '<a href="http://example.test/ok">13</a>',
      '<a href="//cdn.example.test/ok">14</a>',
      '<a href="./a:b">15</a>',
      '<a href="1a:b">16</a>',
    ].join('');
    assert.deepEqual(hrefs(html), [
      'HTTPS://example.test/ok',
      'http://example.test/ok',
      '//cdn.example.test/ok',
      './a:b',
      '1a:b',
    ]);
  });
});

describe('extractPage: nofollow', () => {
  it('rel is a token list, case-insensitive', () => {
    const html = [
      '<a href="1" rel="nofollow">',
      '<a href="2" rel="noopener NoFollow">',
      '<a href="3" rel="nofollow\tnoreferrer">',
      '<a href="4" rel="nofollowme">',
      '<a href="5" rel="ugc sponsored">',
      '<a href="6">',
      '<area href="7" rel="nofollow">',
      '<link rel="nofollow next" href="8">',
    ].join('');
    assert.deepEqual(
      facts(html).links.map((l) => [l.href, l.nofollow]),
      [
        ['1', true],
        ['2', true],
        ['3', true],
        ['4', false],
        ['5', false],
        ['6', false],
        ['7', true],
        ['8', true],
      ],
    );
  });
});

describe('extractPage: base', () => {
  it('absolute base', () => {
    assert.equal(
      facts('<base href="https://cdn.example.test/root/"><a href="x">x</a>').base,
      'https://cdn.example.test/root/',
    );
  });

  it('relative base is resolved against the page URL', () => {
    assert.equal(facts('<base href="../other/">').base, 'https://example.test/docs/other/');
    assert.equal(facts('<base href="/">').base, 'https://example.test/');
  });

  it('only the first base with an href counts', () => {
    assert.equal(
      facts('<base target="_blank"><base href="/one/"><base href="/two/">').base,
      'https://example.test/one/',
    );
  });

  it('no base, an invalid base or a javascript:/data: base leave the page URL', () => {
    assert.equal(facts('<p>x</p>').base, PAGE);
    assert.equal(facts('<base href="http://[::1">').base, PAGE);
    assert.equal(facts('<base href="javascript:alert(1)">').base, PAGE);
    assert.equal(facts('<base href="data:text/html,x">').base, PAGE);
  });

  it('a base in the body still sets the base, and is not a link', () => {
    const result = facts('<a href="a">a</a><base href="/b/">');
    assert.equal(result.base, 'https://example.test/b/');
    assert.deepEqual(
      result.links.map((l) => l.href),
      ['a'],
    );
  });

  it('with an invalid page URL, a relative base falls back to it', () => {
    assert.equal(extractPage('<base href="x/">', 'not a url').base, 'not a url');
    assert.equal(extractPage('<base href="https://a.test/">', 'not a url').base, 'https://a.test/');
  });
});

describe('extractPage: title', () => {
  it('entities decoded and whitespace collapsed', () => {
    assert.equal(
      facts('<title>\n  Fish &amp; Chips &mdash;\t the&nbsp;guide \n</title>').title,
      'Fish & Chips — the guide',
    );
  });

  it('the first title wins; svg titles do not count', () => {
    assert.equal(
      facts('<svg><title>icon</title></svg><title>Page</title><title>Second</title>').title,
      'Page',
    );
  });

  it('tags inside the title are text', () => {
    assert.equal(facts('<title>a <b>bold</b> move</title>').title, 'a <b>bold</b> move');
  });

  it('absent or blank title is null', () => {
    assert.equal(facts('<p>no title</p>').title, null);
    assert.equal(facts('<title>  \n </title>').title, null);
  });

  it('a title cut off by the end of input', () => {
    assert.equal(facts('<html><head><title>Cut &amp; off').title, 'Cut & off');
  });
});

describe('extractPage: canonical', () => {
  it('first rel=canonical href, raw', () => {
    const html = '<link rel="canonical" href=" /canon?a=1&amp;b=2 "><link rel="canonical" href="/second">';
    assert.equal(facts(html).canonical, '/canon?a=1&b=2');
    assert.equal(facts('<link rel="Canonical alternate" href="/c">').canonical, '/c');
    assert.equal(facts('<link rel="alternate" href="/c">').canonical, null);
    assert.equal(facts('<link rel="canonical" href="">').canonical, null);
  });
});

describe('extractPage: meta robots', () => {
  const cases: [string, { noindex: boolean; nofollow: boolean }][] = [
    ['<meta name="robots" content="noindex">', { noindex: true, nofollow: false }],
    ['<meta name="robots" content="nofollow">', { noindex: false, nofollow: true }],
    ['<meta name="robots" content="noindex, nofollow">', { noindex: true, nofollow: true }],
    ['<meta name="robots" content="noindex,nofollow">', { noindex: true, nofollow: true }],
    ['<meta name="robots" content="none">', { noindex: true, nofollow: true }],
    ['<META NAME="ROBOTS" CONTENT="NOINDEX">', { noindex: true, nofollow: false }],
    ['<meta name=" Robots " content="NoFollow">', { noindex: false, nofollow: true }],
    ['<meta name="robots" content="index, follow, max-snippet:-1">', { noindex: false, nofollow: false }],
    ['<meta name="robots" content="all">', { noindex: false, nofollow: false }],
    ['<meta name="crawlstack" content="noindex">', { noindex: true, nofollow: false }],
    ['<meta name="CrawlStack" content="none">', { noindex: true, nofollow: true }],
    ['<meta name="googlebot" content="noindex, nofollow">', { noindex: false, nofollow: false }],
    [
      '<meta name="robots" content="noindex"><meta name="crawlstack" content="nofollow">',
      { noindex: true, nofollow: true },
    ],
    ['<meta content="noindex" name="robots">', { noindex: true, nofollow: false }],
    ['<!-- <meta name="robots" content="noindex"> -->', { noindex: false, nofollow: false }],
  ];
  for (const [html, robots] of cases) {
    it(html, () => assert.deepEqual(facts(html, { agent: 'crawlstack' }).robots, robots));
  }

  it('agent-specific tags need the agent option', () => {
    assert.deepEqual(facts('<meta name="crawlstack" content="noindex">').robots, {
      noindex: false,
      nofollow: false,
    });
  });
});

describe('extractPage: meta refresh', () => {
  const cases: [string, string | null][] = [
    ['5; url=next.html', 'next.html'],
    ['0;URL=/next', '/next'],
    ['0; URL="quoted.html"', 'quoted.html'],
    ["3;url='single.html'", 'single.html'],
    ['  10 ; Url = spaced.html ', 'spaced.html'],
    ['5, url=comma.html', 'comma.html'],
    ['5; next-without-prefix.html', 'next-without-prefix.html'],
    ['5 url=space-separated.html', 'space-separated.html'],
    ['0.5; url=fraction.html', 'fraction.html'],
    ['.5; url=dot.html', 'dot.html'],
    ['0; url="unterminated.html', 'unterminated.html'],
    ['0; url=http://example.test/a?b=1&c=2', 'http://example.test/a?b=1&c=2'],
    ['0; urlx.html', 'urlx.html'],
    ['5', null],
    ['5;', null],
    ['', null],
    ['url=nodelay.html', null],
    ['x; url=bad.html', null],
    ['5x; url=bad.html', null],
  ];
  for (const [content, target] of cases) {
    it(JSON.stringify(content), () => {
      const result = facts(`<meta http-equiv="refresh" content="${content.replaceAll('"', '&quot;')}">`);
      assert.equal(result.refresh, target);
      assert.deepEqual(result.links, target === null ? [] : [link(target, 'meta-refresh', 'page')]);
    });
  }

  it('case-insensitive http-equiv, first refresh wins, javascript: targets skipped', () => {
    const html =
      '<meta http-equiv="REFRESH" content="0; url=javascript:x"><meta http-equiv="Refresh" content="1; url=a.html"><meta http-equiv="refresh" content="2; url=b.html">';
    const result = facts(html);
    assert.equal(result.refresh, 'a.html');
    assert.deepEqual(
      result.links.map((l) => l.href),
      ['a.html', 'b.html'],
    );
  });

  it('a refresh to a PDF is classified as a document', () => {
    assert.deepEqual(facts('<meta http-equiv="refresh" content="0;url=/f.pdf">').links, [
      link('/f.pdf', 'meta-refresh', 'document'),
    ]);
  });
});

describe('extractPage: srcset', () => {
  it('descriptors and commas inside URLs', () => {
    const html = [
      '<img srcset="',
      'https://cdn.example.test/x.jpg?w=100,h=50 1x,',
      ' /y.jpg?crop=0,0,10,10 2x ,',
      'z.jpg 300w,w.jpg',
      '">',
    ].join('');
    assert.deepEqual(hrefs(html), [
      'https://cdn.example.test/x.jpg?w=100,h=50',
      '/y.jpg?crop=0,0,10,10',
      'z.jpg',
      'w.jpg',
    ]);
  });

  it('trailing commas end a URL; parentheses in descriptors; odd spacing', () => {
    assert.deepEqual(hrefs('<img srcset="a.jpg,b.jpg 2x">'), ['a.jpg,b.jpg']);
    assert.deepEqual(hrefs('<img srcset="a.jpg, b.jpg,, c.jpg">'), ['a.jpg', 'b.jpg', 'c.jpg']);
    assert.deepEqual(hrefs('<img srcset="a.jpg (foo, bar) 1x, b.jpg">'), ['a.jpg', 'b.jpg']);
    assert.deepEqual(hrefs('<img srcset="\n  a.jpg\n  1x,\n  b.jpg\n 2x\n">'), ['a.jpg', 'b.jpg']);
    assert.deepEqual(hrefs('<img srcset=" , ,">'), []);
  });
});

describe('extractPage: malformed input', () => {
  it('5,000 links on a page, in order', () => {
    const html = Array.from({ length: 5000 }, (_, i) => `<li><a href="/p/${i}.html">${i}</a>`).join('\n');
    const links = facts(html).links;
    assert.equal(links.length, 5000);
    assert.equal(links[0]!.href, '/p/0.html');
    assert.equal(links[4999]!.href, '/p/4999.html');
  });

  it('deeply nested and unclosed tags', () => {
    const deep = `${'<div><span>'.repeat(20000)}<a href="deep.html">d</a>${'</span></div>'.repeat(5)}`;
    assert.deepEqual(hrefs(deep), ['deep.html']);
    const unclosed = '<ul><li><a href=1>one<li><a href=2>two<p><b><i><a href=3>three</ul><a href=4>';
    assert.deepEqual(hrefs(unclosed), ['1', '2', '3', '4']);
  });

  it('a truncated document keeps what was complete and drops the cut tag', () => {
    const html = '<html><head><title>T</title></head><body><a href="done.html">x</a><a href="cut.ht';
    const result = facts(html);
    assert.equal(result.title, 'T');
    assert.deepEqual(
      result.links.map((l) => l.href),
      ['done.html'],
    );
    assert.deepEqual(hrefs('<a href="x.html" class="y'), []);
    assert.deepEqual(hrefs('<a href="x.html"'), []);
  });

  it('truncated inside a comment or a script', () => {
    assert.deepEqual(hrefs('<a href="a">a</a><!-- <a href="b">'), ['a']);
    assert.deepEqual(hrefs('<a href="a">a</a><script>x = "<a href=b>'), ['a']);
  });

  it('garbage does not throw', () => {
    const inputs = [
      '',
      '<',
      '</',
      '<>',
      '<<<>>>',
      '<a',
      '<a href',
      '<a href=',
      '<a href="',
      "<a href='",
      '<!',
      '<!--',
      '<![CDATA[<a href=x>',
      '<?php echo "<a href=x>"; ?>',
      '</a></div></html>',
      '\u0000<a\u0000href=x>',
      '<a href="&#xFFFFFFFF;&#0;&#xD800;">x</a>',
      '<svg><a href="svg.html"/><title>t</title></svg>',
      '<math><mi><a href="m.html">m</a></mi></math>',
      '<table><a href="t.html">in table</a><tr><td>x</table>',
      '<a href=x>'.repeat(3) + '</a>'.repeat(10),
    ];
    for (const html of inputs) {
      assert.doesNotThrow(() => extractPage(html, PAGE, { text: true, agent: 'crawlstack' }), html);
    }
  });

  it('invalid numeric entities become U+FFFD', () => {
    assert.deepEqual(hrefs('<a href="/a&#0;b">x</a>'), ['/a\uFFFDb']);
  });

  it('self-closing script does not hide what follows', () => {
    assert.deepEqual(hrefs('<script src="a.js"/><a href="b.html">b</a>'), ['a.js', 'b.html']);
  });
});

describe('extractPage: text', () => {
  it('is absent unless asked for', () => {
    assert.equal(facts('<p>x</p>').text, undefined);
  });

  it('one line per block, whitespace collapsed, hidden content left out', () => {
    const html = [
      '<html><head><title>Title</title><style>p{}</style><script>var x;</script></head><body>',
      '<h1>  Heading\n one </h1>',
      '<p>First <b>bold</b>&nbsp;and <a href="#">link</a>.</p>',
      '<div>Block<br>after break</div>',
      '<noscript>Enable JS</noscript><template><p>tpl</p></template>',
      '<ul><li>one</li><li>two</li></ul>',
      '<table><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>',
      '<p>caf&eacute; &lt;tag&gt;</p>',
      '</body></html>',
    ].join('\n');
    assert.equal(
      facts(html, { text: true }).text,
      [
        'Heading one',
        'First bold and link.',
        'Block',
        'after break',
        'one',
        'two',
        'a b',
        'c d',
        'café <tag>',
      ].join('\n'),
    );
  });

  it('line breaks inside pre are kept', () => {
    assert.equal(
      facts('<p>intro</p><pre>line 1\n  line 2\r\n\nline 3</pre><p>outro</p>', { text: true }).text,
      'intro\nline 1\nline 2\nline 3\noutro',
    );
  });

  it('inline elements join without spaces, as rendered', () => {
    assert.equal(facts('<p><span>foo</span><span>bar</span> baz</p>', { text: true }).text, 'foobar baz');
  });

  it('large text grows the buffer', () => {
    const word = 'x'.repeat(1000);
    const html = `<p>${Array.from({ length: 200 }, () => `<b>${word}</b>`).join(' ')}</p>`;
    const text = facts(html, { text: true }).text!;
    assert.equal(text.length, 200 * 1000 + 199);
  });

  it('characters outside the BMP survive', () => {
    assert.equal(facts('<p>&#x1F600; 😀 日本語</p>', { text: true }).text, '😀 😀 日本語');
  });
});
