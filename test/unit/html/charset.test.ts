import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { charsetParameter, decodeBody, isHtml, mediaType } from '../../../functions/core/html/charset.ts';
import { charsetFromContent, prescanCharset } from '../../../functions/core/html/meta-prescan.ts';

/** Bytes from ASCII strings and raw byte arrays, in order. */
function bytes(...parts: (string | number[])[]): Uint8Array {
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      for (const ch of part) {
        const code = ch.charCodeAt(0);
        assert.ok(code < 0x80, 'test strings must be ASCII');
        out.push(code);
      }
    } else out.push(...part);
  }
  return new Uint8Array(out);
}

// The same words in legacy encodings, as real byte sequences.
const CAFE_1252 = [0x63, 0x61, 0x66, 0xe9]; // café
const NIHONGO_SJIS = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]; // 日本語
const NIHONGO_EUCJP = [0xc6, 0xfc, 0xcb, 0xdc, 0xb8, 0xec]; // 日本語
const ZHONGWEN_GBK = [0xd6, 0xd0, 0xce, 0xc4]; // 中文
const ZHONGWEN_BIG5 = [0xa4, 0xa4, 0xa4, 0xe5]; // 中文
const PRIVET_KOI8R = [0xd0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]; // привет

describe('decodeBody from the Content-Type charset', () => {
  const cases: [string, number[], string, string][] = [
    ['text/html; charset=windows-1252', CAFE_1252, 'café', 'windows-1252'],
    ['text/html; charset=ISO-8859-1', CAFE_1252, 'café', 'windows-1252'],
    ['text/html; charset=latin1', [0x80], '€', 'windows-1252'],
    ['text/html; charset=Shift_JIS', NIHONGO_SJIS, '日本語', 'shift_jis'],
    ['text/html; charset=x-sjis', NIHONGO_SJIS, '日本語', 'shift_jis'],
    ['text/html; charset=EUC-JP', NIHONGO_EUCJP, '日本語', 'euc-jp'],
    ['text/html; charset=gbk', ZHONGWEN_GBK, '中文', 'gbk'],
    ['text/html; charset=gb2312', ZHONGWEN_GBK, '中文', 'gbk'],
    ['text/html; charset=gb18030', ZHONGWEN_GBK, '中文', 'gb18030'],
    ['text/html; charset=big5', ZHONGWEN_BIG5, '中文', 'big5'],
    ['text/html; charset=koi8-r', PRIVET_KOI8R, 'привет', 'koi8-r'],
    ['text/html;charset="Shift_JIS"', NIHONGO_SJIS, '日本語', 'shift_jis'],
    ["text/html; charset='euc-jp'", NIHONGO_EUCJP, '日本語', 'euc-jp'],
    ['text/html; foo=bar; CHARSET = utf-8 ', [0xc3, 0xa9], 'é', 'utf-8'],
  ];
  for (const [contentType, raw, text, charset] of cases) {
    it(`${contentType}`, () => {
      const decoded = decodeBody(bytes(raw), contentType);
      assert.deepEqual(decoded, { text, charset, source: 'header' });
    });
  }

  it('header beats meta', () => {
    const body = bytes('<meta charset="shift_jis"><p>', CAFE_1252);
    const decoded = decodeBody(body, 'text/html; charset=windows-1252');
    assert.equal(decoded.source, 'header');
    assert.equal(decoded.charset, 'windows-1252');
    assert.equal(decoded.text, '<meta charset="shift_jis"><p>café');
  });

  it('an unknown header label falls back to the meta prescan, then to the default', () => {
    const withMeta = decodeBody(
      bytes('<meta charset=shift_jis>', NIHONGO_SJIS),
      'text/html; charset=no-such-thing',
    );
    assert.equal(withMeta.source, 'meta');
    assert.equal(withMeta.text, '<meta charset=shift_jis>日本語');
    const without = decodeBody(bytes('<p>plain</p>'), 'text/html; charset=no-such-thing');
    assert.deepEqual(without, { text: '<p>plain</p>', charset: 'utf-8', source: 'default' });
  });

  it('labels Node cannot decode fall back (replacement encodings)', () => {
    assert.equal(decodeBody(bytes('abc'), 'text/html; charset=iso-2022-kr').source, 'default');
  });
});

describe('decodeBody from a byte order mark', () => {
  it('UTF-8 BOM is stripped', () => {
    assert.deepEqual(decodeBody(bytes([0xef, 0xbb, 0xbf], 'caf', [0xc3, 0xa9]), null), {
      text: 'café',
      charset: 'utf-8',
      source: 'bom',
    });
  });

  it('UTF-16LE and UTF-16BE', () => {
    assert.deepEqual(decodeBody(bytes([0xff, 0xfe, 0x3c, 0, 0x70, 0, 0xe5, 0x65]), null), {
      text: '<p日',
      charset: 'utf-16le',
      source: 'bom',
    });
    assert.deepEqual(decodeBody(bytes([0xfe, 0xff, 0, 0x3c, 0, 0x70, 0x65, 0xe5]), null), {
      text: '<p日',
      charset: 'utf-16be',
      source: 'bom',
    });
  });

  it('BOM beats the header and the meta', () => {
    const body = bytes([0xef, 0xbb, 0xbf], '<meta charset=koi8-r>', [0xc3, 0xa9]);
    const decoded = decodeBody(body, 'text/html; charset=windows-1252');
    assert.deepEqual(decoded, { text: '<meta charset=koi8-r>é', charset: 'utf-8', source: 'bom' });
  });
});

describe('decodeBody from <meta> (HTML prescan)', () => {
  it('<meta charset>', () => {
    const decoded = decodeBody(bytes('<!doctype html><meta charset="Shift_JIS"><title>', NIHONGO_SJIS), null);
    assert.equal(decoded.source, 'meta');
    assert.equal(decoded.charset, 'shift_jis');
    assert.ok(decoded.text.endsWith('<title>日本語'));
  });

  it('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">', () => {
    const decoded = decodeBody(
      bytes(
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">',
        NIHONGO_SJIS,
      ),
      'text/html',
    );
    assert.equal(decoded.source, 'meta');
    assert.equal(decoded.charset, 'shift_jis');
    assert.ok(decoded.text.endsWith('日本語'));
  });

  it('content before http-equiv, unquoted and single-quoted values, upper case', () => {
    assert.equal(
      prescanCharset(bytes("<META CONTENT='text/html; charset=EUC-JP' HTTP-EQUIV=Content-Type>")),
      'euc-jp',
    );
    assert.equal(prescanCharset(bytes('<meta charset=koi8-r />')), 'koi8-r');
    // An unquoted value runs to whitespace or '>', so the slash is part of it: not a label.
    assert.equal(prescanCharset(bytes('<meta charset=koi8-r/>')), null);
    assert.equal(prescanCharset(bytes('<meta/charset="gbk">')), 'gbk');
  });

  it('content with a charset but no http-equiv pragma is ignored', () => {
    assert.equal(prescanCharset(bytes('<meta content="text/html; charset=koi8-r">')), null);
    assert.equal(prescanCharset(bytes('<meta name="x" content="charset=koi8-r">')), null);
  });

  it('skips comments, attribute values of other tags, and unknown labels', () => {
    assert.equal(prescanCharset(bytes('<!-- <meta charset=koi8-r> --><meta charset=gbk>')), 'gbk');
    assert.equal(prescanCharset(bytes('<!--><meta charset=gbk>')), 'gbk', '"<!-->" is a whole comment');
    assert.equal(prescanCharset(bytes('<div title="<meta charset=koi8-r>"><meta charset=big5>')), 'big5');
    assert.equal(prescanCharset(bytes('<meta charset=bogus><meta charset=euc-jp>')), 'euc-jp');
    assert.equal(prescanCharset(bytes('<?xml version="1.0"?><!DOCTYPE html><meta charset=big5>')), 'big5');
  });

  it('the first charset attribute of an element wins; http-equiv content charset first', () => {
    assert.equal(prescanCharset(bytes('<meta charset=gbk charset=big5>')), 'gbk');
    assert.equal(prescanCharset(bytes('<meta charset=gbk><meta charset=big5>')), 'gbk');
  });

  it('UTF-16 labels mean UTF-8; x-user-defined means windows-1252', () => {
    assert.equal(prescanCharset(bytes('<meta charset="utf-16">')), 'utf-8');
    assert.equal(prescanCharset(bytes('<meta charset="UTF-16BE">')), 'utf-8');
    assert.equal(prescanCharset(bytes('<meta charset="x-user-defined">')), 'windows-1252');
  });

  it('looks at the first 1024 bytes only', () => {
    const padding = ' '.repeat(1024);
    assert.equal(prescanCharset(bytes(padding, '<meta charset=gbk>')), null);
    assert.equal(prescanCharset(bytes(' '.repeat(1000), '<meta charset=gbk>')), 'gbk');
    const decoded = decodeBody(bytes(padding, '<meta charset=shift_jis>', NIHONGO_SJIS), null);
    assert.equal(decoded.source, 'default');
  });

  it('never throws on truncated markup', () => {
    for (const text of [
      '<meta',
      '<meta ',
      '<meta charset',
      '<meta charset="gb',
      '<!--',
      '<a href="',
      '</',
      '<!',
    ]) {
      assert.equal(prescanCharset(bytes(text)), null, text);
    }
  });

  it('charsetFromContent', () => {
    assert.equal(charsetFromContent('text/html; charset=Shift_JIS'), 'Shift_JIS');
    assert.equal(charsetFromContent('text/html;charset = "euc-jp" ; x'), 'euc-jp');
    assert.equal(charsetFromContent("charset='gbk'"), 'gbk');
    assert.equal(charsetFromContent('charsetcharset=big5;'), 'big5');
    assert.equal(charsetFromContent('charset="unterminated'), null);
    assert.equal(charsetFromContent('text/html'), null);
  });
});

describe('decodeBody default (no BOM, header or meta)', () => {
  it('valid UTF-8 decodes as UTF-8', () => {
    assert.deepEqual(decodeBody(bytes('<p>', [0xe6, 0x97, 0xa5], '</p>'), 'text/html'), {
      text: '<p>日</p>',
      charset: 'utf-8',
      source: 'default',
    });
  });

  it('bytes that are not UTF-8 decode as windows-1252', () => {
    assert.deepEqual(decodeBody(bytes('<p>', CAFE_1252, '</p>'), null), {
      text: '<p>café</p>',
      charset: 'windows-1252',
      source: 'default',
    });
  });

  it('a UTF-8 sequence cut off at the end (a byte cap) is still UTF-8', () => {
    const decoded = decodeBody(bytes('<p>', [0xc3, 0xa9], ' ', [0xe6, 0x97]), null);
    assert.equal(decoded.charset, 'utf-8');
    assert.equal(decoded.text, '<p>é \uFFFD');
  });

  it('a literal U+FFFD in valid UTF-8 stays UTF-8', () => {
    assert.equal(decodeBody(bytes([0xef, 0xbf, 0xbd]), null).charset, 'utf-8');
  });

  it('empty body', () => {
    assert.deepEqual(decodeBody(new Uint8Array(0), null), { text: '', charset: 'utf-8', source: 'default' });
  });
});

describe('charsetParameter and mediaType', () => {
  it('charsetParameter', () => {
    assert.equal(charsetParameter('text/html; charset=utf-8'), 'utf-8');
    assert.equal(charsetParameter('text/html; charset="a\\"b"'), 'a"b');
    assert.equal(charsetParameter('text/html; boundary=x; charset=gbk'), 'gbk');
    assert.equal(charsetParameter('text/html; charset='), null);
    assert.equal(charsetParameter('text/html'), null);
    assert.equal(charsetParameter('text/html; ; charset'), null);
  });

  it('mediaType', () => {
    assert.equal(mediaType('Text/HTML; Charset=UTF-8'), 'text/html');
    assert.equal(mediaType(' application/xhtml+xml '), 'application/xhtml+xml');
    assert.equal(mediaType(null), null);
    assert.equal(mediaType(''), null);
    assert.equal(mediaType('html'), null);
    assert.equal(mediaType('text /html'), null);
  });
});

describe('isHtml', () => {
  it('trusts a Content-Type when there is one', () => {
    assert.equal(isHtml('text/html; charset=utf-8', bytes('{}')), true);
    assert.equal(isHtml('application/xhtml+xml', bytes('')), true);
    assert.equal(isHtml('text/plain', bytes('<!doctype html><html>')), false);
    assert.equal(isHtml('application/pdf', bytes('%PDF-1.7')), false);
  });

  it('sniffs the first bytes when the header is missing', () => {
    const htmlStarts = [
      '<!DOCTYPE html>',
      '<!doctype HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">',
      '<html lang="en">',
      '  \n\t<HTML>',
      '<head><title>x</title>',
      '<body>',
      '<!-- comment -->',
      '<p>text',
      '<html\nlang=en>',
    ];
    for (const start of htmlStarts) assert.equal(isHtml(null, bytes(start)), true, start);
    const notHtml = [
      '%PDF-1.4',
      '{"a":1}',
      '<?xml version="1.0"?><rss>',
      'plain text',
      '<htmlx>',
      '',
      'GIF89a',
    ];
    for (const start of notHtml) assert.equal(isHtml(null, bytes(start)), false, start);
  });

  it('sniffs after a BOM, UTF-16 too', () => {
    assert.equal(isHtml(null, bytes([0xef, 0xbb, 0xbf], '<!doctype html>')), true);
    assert.equal(
      isHtml(null, bytes([0xff, 0xfe, 0x3c, 0, 0x68, 0, 0x74, 0, 0x6d, 0, 0x6c, 0, 0x3e, 0])),
      true,
    );
    assert.equal(isHtml('', bytes('<html>')), true, 'an empty header counts as missing');
  });
});
