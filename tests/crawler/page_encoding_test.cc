// The encoding sniffing algorithm (HTML §13.2.3.1-2) and DecodedPage, which reads a page with it.
#include "crawler/page/page_encoding.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "crawler/page/page_decoder.h"

namespace urlsieve {
namespace {

std::string Sniffed(std::string_view body, std::string_view content_type = "") {
  const PageEncoding found = SniffPageEncoding(body, content_type, Windows1252Encoding());
  return std::string(found.encoding->name) + " from " +
         std::string(EncodingSourceName(found.source));
}

std::string Prescanned(std::string_view bytes) {
  const TextEncoding* found = PrescanForEncoding(bytes);
  return found == nullptr ? "(none)" : std::string(found->name);
}

std::string FromMetaContent(std::string_view content) {
  const TextEncoding* found = EncodingFromMetaContent(content);
  return found == nullptr ? "(none)" : std::string(found->name);
}

std::string Charset(std::string_view content_type) {
  std::optional<std::string> charset = ContentTypeCharset(content_type);
  return charset ? *charset : "(none)";
}

TEST(PageEncodingTest, ABomBeatsEverything) {
  EXPECT_EQ(Sniffed("\xEF\xBB\xBF<meta charset=gbk>", "text/html; charset=shift_jis"),
            "UTF-8 from bom");
  EXPECT_EQ(Sniffed("\xFE\xFF\0<", "text/html; charset=gbk"), "UTF-16BE from bom");
  EXPECT_EQ(Sniffed("\xFF\xFE<\0", "text/html; charset=gbk"), "UTF-16LE from bom");
  size_t length = 0;
  EXPECT_EQ(SniffBom("\xEF\xBB\xBFx", &length), &Utf8Encoding());
  EXPECT_EQ(length, 3u);
  EXPECT_EQ(SniffBom("\xEF\xBBx", &length), nullptr);
  EXPECT_EQ(length, 0u);
}

TEST(PageEncodingTest, TheHttpCharsetBeatsTheMeta) {
  EXPECT_EQ(Sniffed("<meta charset=gbk>", "text/html; charset=shift_jis"), "Shift_JIS from http");
  EXPECT_EQ(Sniffed("<meta charset=gbk>", "text/html; charset=\"ISO-8859-2\""),
            "ISO-8859-2 from http");
  // UTF-16 from HTTP is UTF-16 (only a <meta> saying UTF-16 is read as UTF-8).
  EXPECT_EQ(Sniffed("<\0p\0>\0", "text/html; charset=utf-16"), "UTF-16LE from http");
}

TEST(PageEncodingTest, AnUnknownLabelFallsThrough) {
  EXPECT_EQ(Sniffed("<meta charset=gbk>", "text/html; charset=no-such-thing"), "GBK from meta");
  EXPECT_EQ(Sniffed("<meta charset=no-such-thing>", "text/html"), "windows-1252 from default");
  EXPECT_EQ(Sniffed("<p>no declaration</p>", ""), "windows-1252 from default");
  const PageEncoding custom =
      SniffPageEncoding("<p>x</p>", "text/html", *EncodingForLabel("koi8-r"));
  EXPECT_EQ(custom.encoding->name, "KOI8-R");
  EXPECT_EQ(custom.source, EncodingSource::kDefault);
}

TEST(PageEncodingTest, AnXmlDocumentIsReadAsAnXmlParserReadsIt) {
  const std::string_view xhtml = "application/xhtml+xml";
  EXPECT_EQ(Sniffed("<?xml version=\"1.0\" encoding=\"gbk\"?><html>", xhtml), "GBK from meta");
  EXPECT_EQ(Sniffed("<?xml version='1.0' encoding = 'Shift_JIS' ?>", "text/xml"),
            "Shift_JIS from meta");
  // No declaration: UTF-8, not the crawl's default, and no <meta> prescan.
  EXPECT_EQ(Sniffed("<html><meta charset=gbk></html>", xhtml), "UTF-8 from default");
  EXPECT_EQ(Sniffed("<?xml version=\"1.0\"?><html>", xhtml), "UTF-8 from default");
  EXPECT_EQ(Sniffed("<?xml version=\"1.0\" encoding=\"utf-16\"?>", xhtml), "UTF-8 from meta");
  EXPECT_EQ(
      Sniffed("<?xml version=\"1.0\" encoding=\"gbk\"?>", "application/xhtml+xml; charset=big5"),
      "Big5 from http");
  EXPECT_EQ(Sniffed("\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"gbk\"?>", xhtml),
            "UTF-8 from bom");
  EXPECT_EQ(Sniffed("<?xml version=\"1.0\" encoding=\"gbk\"", xhtml), "UTF-8 from default");
  // In text/html, an XML declaration counts when no <meta> does (§13.2.3.2).
  EXPECT_EQ(Sniffed("<?xml version=\"1.0\" encoding=\"gbk\"?><html>", "text/html"),
            "GBK from meta");
  EXPECT_TRUE(IsXmlMediaType("application/rss+xml; charset=utf-8"));
  EXPECT_TRUE(IsXmlMediaType(" Application/XHTML+XML"));
  EXPECT_FALSE(IsXmlMediaType("text/html"));
  EXPECT_FALSE(IsXmlMediaType(""));
}

TEST(PageEncodingTest, ContentTypeCharsetFollowsTheMimeTypeParser) {
  EXPECT_EQ(Charset("text/html; charset=GBK"), "GBK");
  EXPECT_EQ(Charset("text/html;charset=\"shift_jis\""), "shift_jis");
  EXPECT_EQ(Charset("  text/html ; foo=bar;  charset=utf-8  ; x=y"), "utf-8");
  EXPECT_EQ(Charset("text/html; CHARSET=koi8-r"), "koi8-r");
  EXPECT_EQ(Charset("text/html; charset=gbk; charset=utf-8"), "gbk");  // the first one
  EXPECT_EQ(Charset("text/html; charset=\"gb\\2312\""), "gb2312");     // a quoted-pair
  EXPECT_EQ(Charset("text/html; charset=\"gbk\" ; x"), "gbk");
  EXPECT_EQ(Charset("text/html; charset="), "(none)");
  EXPECT_EQ(Charset("text/html; charset"), "(none)");
  EXPECT_EQ(Charset("text/html; foo=\"a;charset=gbk\""), "(none)");  // inside another value
  EXPECT_EQ(Charset("text/html; foo=\"a;charset=gbk\"; charset=big5"), "big5");
  EXPECT_EQ(Charset("text/html"), "(none)");
  EXPECT_EQ(Charset(""), "(none)");
  EXPECT_EQ(Charset("html; charset=gbk"), "(none)");        // not a MIME type: no slash
  EXPECT_EQ(Charset("text/h tml; charset=gbk"), "(none)");  // nor a token subtype
}

TEST(PageEncodingTest, PrescanFindsMetaCharset) {
  EXPECT_EQ(Prescanned("<meta charset=gbk>"), "GBK");
  EXPECT_EQ(Prescanned("<META CHARSET=\"Shift_JIS\">"), "Shift_JIS");
  EXPECT_EQ(Prescanned("<meta charset='koi8-r'>"), "KOI8-R");
  EXPECT_EQ(Prescanned("<meta/charset=gbk>"), "GBK");
  EXPECT_EQ(Prescanned("<meta  charset = \" gbk \" >"), "GBK");  // a label's spaces are trimmed
  EXPECT_EQ(Prescanned("<html><head><title>x</title><meta charset=big5></head>"), "Big5");
  EXPECT_EQ(Prescanned("<meta charset=gbk charset=utf-8>"), "GBK");  // the first of a name
  EXPECT_EQ(Prescanned("<meta name=x><meta charset=euc-kr>"), "EUC-KR");
  EXPECT_EQ(Prescanned("<metacharset=gbk>"), "(none)");  // not a meta tag
  EXPECT_EQ(Prescanned("<meta>charset=gbk"), "(none)");
  EXPECT_EQ(Prescanned("<meta charset=gbk"), "(none)");  // no '>' before the end
  EXPECT_EQ(Prescanned(""), "(none)");
}

TEST(PrescanTest, TheHttpEquivFormNeedsItsPragma) {
  EXPECT_EQ(Prescanned("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\">"),
            "GBK");
  EXPECT_EQ(Prescanned("<meta content='text/html;charset=windows-1251' http-equiv=content-type>"),
            "windows-1251");
  EXPECT_EQ(Prescanned("<meta content=\"text/html; charset=gbk\">"), "(none)");  // no pragma
  EXPECT_EQ(Prescanned("<meta http-equiv=refresh content=\"0; charset=gbk\">"), "(none)");
  EXPECT_EQ(Prescanned("<meta http-equiv=content-type content=\"text/html\"><meta charset=big5>"),
            "Big5");
  // A charset attribute needs no pragma, and wins over a content attribute after it.
  EXPECT_EQ(Prescanned("<meta charset=big5 content=\"text/html; charset=gbk\" "
                       "http-equiv=content-type>"),
            "Big5");
}

TEST(PrescanTest, CommentsAndOtherTagsAreSkipped) {
  EXPECT_EQ(Prescanned("<!-- <meta charset=gbk> --><meta charset=big5>"), "Big5");
  EXPECT_EQ(Prescanned("<!--><meta charset=gbk>"), "GBK");  // "<!-->" is a whole comment
  EXPECT_EQ(Prescanned("<!---><meta charset=gbk>-->"), "GBK");
  EXPECT_EQ(Prescanned("<!-- <meta charset=gbk>"), "(none)");  // never closed
  EXPECT_EQ(Prescanned("<a title=\"<meta charset=gbk>\"><meta charset=big5>"), "Big5");
  EXPECT_EQ(Prescanned("<a title='x > y' href=x><meta charset=big5>"), "Big5");
  EXPECT_EQ(Prescanned("<!DOCTYPE html><?xml version=\"1.0\"?></p><meta charset=euc-jp>"),
            "EUC-JP");
  EXPECT_EQ(Prescanned("<? <meta charset=gbk> ?>"), "(none)");  // "<?" runs to the first '>'
}

TEST(PrescanTest, Utf16AndXUserDefinedInAMetaAreReadAsTheSpecSays) {
  EXPECT_EQ(Prescanned("<meta charset=utf-16>"), "UTF-8");
  EXPECT_EQ(Prescanned("<meta charset=utf-16be>"), "UTF-8");
  EXPECT_EQ(Prescanned("<meta charset=x-user-defined>"), "windows-1252");
  EXPECT_EQ(Prescanned("<meta charset=iso-2022-kr>"), "replacement");
  // A UTF-16 XML declaration, without a BOM, is UTF-16.
  EXPECT_EQ(Prescanned(std::string_view("<\0?\0x\0m\0l\0", 10)), "UTF-16LE");
  EXPECT_EQ(Prescanned(std::string_view("\0<\0?\0x\0m\0l", 10)), "UTF-16BE");
}

TEST(PrescanTest, AnXmlDeclarationAnswersWhenNoMetaDoes) {
  EXPECT_EQ(Prescanned("<?xml version=\"1.0\" encoding=\"euc-kr\"?><html>"), "EUC-KR");
  EXPECT_EQ(Prescanned("<?xml version=\"1.0\" encoding=\"euc-kr\"?><meta charset=gbk>"), "GBK");
  EXPECT_EQ(Prescanned("<?xml encoding\t=\t'utf-16le'?>"), "UTF-8");
  EXPECT_EQ(Prescanned("<?xml encoding=\"euc kr\"?>"), "(none)");  // a space in the label
  EXPECT_EQ(Prescanned("<?xml version=\"1.0\"?><p>encoding=\"gbk\"</p>"), "(none)");
  EXPECT_EQ(Prescanned(" <?xml version=\"1.0\" encoding=\"gbk\"?>"), "(none)");  // not first
}

TEST(PrescanTest, OnlyTheFirst1024BytesAreScanned) {
  const std::string padding(1024 - std::string("<meta charset=gbk>").size(), ' ');
  EXPECT_EQ(Sniffed(padding + "<meta charset=gbk>"), "GBK from meta");  // ends at byte 1024
  EXPECT_EQ(Sniffed(padding + " <meta charset=gbk>"), "windows-1252 from default");
  EXPECT_EQ(Sniffed(std::string(2000, ' ') + "<meta charset=gbk>"), "windows-1252 from default");
}

// Random markup-like bytes: every prefix is scanned without reading past it (ASan checks that),
// and the answer, when there is one, is an encoding of the table.
TEST(PrescanTest, ArbitraryBytesAreScannedSafely) {
  const std::string alphabet = "<>!-/?=\"' \t\nmetaMETAcharsetCHARSEThttp-equivcontent;xml:gbk";
  std::mt19937 random(13);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(random() % 200, ' ');
    for (char& c : bytes) c = alphabet[random() % alphabet.size()];
    if (round % 3 == 0) bytes.insert(0, "<meta charset=");
    for (size_t cut = 0; cut <= bytes.size(); cut += 7) {
      const std::string prefix = bytes.substr(0, cut);  // its own allocation: ASan sees its end
      const TextEncoding* found = PrescanForEncoding(prefix);
      if (found != nullptr) {
        EXPECT_EQ(EncodingForLabel(found->name), found);
      }
      const PageEncoding page = SniffPageEncoding(prefix, prefix, Windows1252Encoding());
      ASSERT_NE(page.encoding, nullptr);
      EncodingFromMetaContent(prefix);
      ContentTypeCharset(prefix);
    }
  }
}

TEST(PrescanTest, MetaContentExtraction) {
  EXPECT_EQ(FromMetaContent("text/html; charset=gbk"), "GBK");
  EXPECT_EQ(FromMetaContent("text/html; CHARSET = gbk ; x"), "GBK");
  EXPECT_EQ(FromMetaContent("charset=\"big5\""), "Big5");
  EXPECT_EQ(FromMetaContent("charset='shift_jis' trailing"), "Shift_JIS");
  EXPECT_EQ(FromMetaContent("charsetx charset=euc-kr"), "EUC-KR");  // the first is no match
  EXPECT_EQ(FromMetaContent("charset=\"gbk"), "(none)");            // an unmatched quote
  EXPECT_EQ(FromMetaContent("charset="), "(none)");
  EXPECT_EQ(FromMetaContent("text/html"), "(none)");
  EXPECT_EQ(FromMetaContent("charset=nonsense"), "(none)");
}

// Pages from testdata/decode_cases.tsv ("page" rows): expectations from Python's codecs.
TEST(DecodedPageTest, DecodesPagesAsPythonsCodecsDo) {
  std::ifstream in(std::string(URLSIEVE_SOURCE_DIR) + "/tests/base/testdata/decode_cases.tsv");
  auto from_hex = [](const std::string& hex) {
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    return bytes;
  };
  int pages = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, '\t')) f.push_back(field);
    if (f.size() != 5 || f[0] != "page") continue;
    ++pages;
    const std::string body = from_hex(f[2]);
    Result<DecodedPage> page = DecodedPage::Decode(body, f[1], Windows1252Encoding());
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_EQ(page->html(), from_hex(f[3])) << f[1] << " " << f[4];
    EXPECT_EQ(page->encoding().name, f[4]) << f[1];
  }
  EXPECT_GE(pages, 7);
}

TEST(DecodedPageTest, Utf8AndAsciiPagesAreNotCopied) {
  const std::string utf8 = "\xEF\xBB\xBF<p>中文</p>";
  Result<DecodedPage> page = DecodedPage::Decode(utf8, "text/html", Windows1252Encoding());
  ASSERT_TRUE(page.ok());
  EXPECT_FALSE(page->copied());
  EXPECT_EQ(page->html(), "<p>中文</p>");
  EXPECT_EQ(page->html().data(), utf8.data() + 3);  // the body itself, after its BOM
  EXPECT_EQ(page->source(), EncodingSource::kBom);

  const std::string ascii = "<p>plain</p>";
  page = DecodedPage::Decode(ascii, "text/html", Windows1252Encoding());
  ASSERT_TRUE(page.ok());
  EXPECT_FALSE(page->copied());
  EXPECT_EQ(page->encoding().name, "windows-1252");

  const std::string gbk = "<p>\xD6\xD0\xCE\xC4</p>";  // Python: '中文'.encode('gbk')
  page = DecodedPage::Decode(gbk, "text/html; charset=gb2312", Windows1252Encoding());
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->copied());
  EXPECT_EQ(page->html(), "<p>中文</p>");
  EXPECT_EQ(page->replacements(), 0u);

  const std::string broken = "<p>\xFF</p>";  // declared UTF-8, repaired
  page = DecodedPage::Decode(broken, "text/html; charset=utf-8", Windows1252Encoding());
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->copied());
  EXPECT_EQ(page->html(), "<p>\xEF\xBF\xBD</p>");
  EXPECT_EQ(page->replacements(), 1u);
}

}  // namespace
}  // namespace urlsieve
