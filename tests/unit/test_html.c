/* test_html.c: html_text, the one escaping function of the HTML pages: markup and quotes
 * come out as entities, UTF-8 passes, ill-formed bytes become U+FFFD, a full buffer fails
 * without a half entity. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "sandboxd/lib/buf.h"
#include "sandboxd/common/err.h"
#include "sandboxd/lib/html.h"
#include "sandboxd/common/banned.h"

static void expect(const char *in, const char *want)
{
	struct buf b;

	buf_init(&b, 1 << 16);
	assert_int_equal(html_text(&b, in), 0);
	assert_string_equal(b.data ? b.data : "", want);
	buf_release(&b);
}

static void test_markup_and_quotes(void **state)
{
	(void)state;
	expect("<img src=x onerror=\"alert('1')\">",
	       "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;");
	expect("a & b", "a &amp; b");
	expect("&amp;", "&amp;amp;");
	expect("</td><td>", "&lt;/td&gt;&lt;td&gt;");
}

static void test_plain_text_unchanged(void **state)
{
	(void)state;
	expect("", "");
	expect(NULL, "");
	expect("sb_0123456789abcdef01234567", "sb_0123456789abcdef01234567");
	expect("Zoë «ok» 日本 😀", "Zoë «ok» 日本 😀");
}

static void test_ill_formed_utf8_repaired(void **state)
{
	(void)state;
	expect("a\xff<b", "a\xef\xbf\xbd&lt;b");
	/* a sequence cut by an ASCII byte, and one cut by the end */
	expect("\xe6\x97<", "\xef\xbf\xbd&lt;");
	expect("x\xe6\x97", "x\xef\xbf\xbd");
	/* an overlong '<' is not a '<' in disguise */
	expect("\xc0\xbc", "\xef\xbf\xbd\xef\xbf\xbd");
}

static void test_bound(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 8);
	assert_int_equal(html_text(&b, "abcde<f"), ERR_TOOBIG);
	assert_true(b.len <= 8);
	/* what was written ends at a whole piece: no "&l" half entity */
	assert_null(strstr(b.data ? b.data : "", "&l"));
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markup_and_quotes),
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_ill_formed_utf8_repaired),
		cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests_name("html", tests, NULL, NULL);
}
