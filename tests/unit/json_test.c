/* The desc.json reader: valid documents, escapes, and hostile text with line/column errors. */
#include <string.h>

#include "core/json.h"
#include "harness/test.h"

static tosac_status parse(const char *text, tosac_arena *a, tosac_json **out, tosac_diag *d)
{
    return tosac_json_parse(text, strlen(text), "t.json", a, out, d);
}

static void valid_documents(void)
{
    tosac_arena a;
    tosac_arena_init(&a);
    tosac_json *j = NULL;
    const char *text = "{\"tosa_file\": \"m.tosa\", \"ifm_name\": [\"a\", \"b\"], \"n\": -1.5e2,"
                       " \"ok\": true, \"no\": false, \"z\": null, \"esc\": \"q\\\"\\\\\\n\\u00e9\\ud83d\\ude00\"}";
    EXPECT_EQ_I(parse(text, &a, &j, NULL), TOSAC_OK);
    EXPECT_STREQ(tosac_json_get(j, "tosa_file")->str, "m.tosa");
    const tosac_json *names = tosac_json_get(j, "ifm_name");
    EXPECT_EQ_I(names->kind, TOSAC_JSON_ARRAY);
    EXPECT_EQ_I(names->n, 2);
    EXPECT_STREQ(names->items[1]->str, "b");
    EXPECT(tosac_json_get(j, "n")->num == -150.0);
    EXPECT(tosac_json_get(j, "ok")->b);
    EXPECT(!tosac_json_get(j, "no")->b);
    EXPECT_EQ_I(tosac_json_get(j, "z")->kind, TOSAC_JSON_NULL);
    EXPECT_STREQ(tosac_json_get(j, "esc")->str, "q\"\\\n\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT(tosac_json_get(j, "missing") == NULL);
    EXPECT_EQ_I(parse("  [ ]  ", &a, &j, NULL), TOSAC_OK);
    EXPECT_EQ_I(j->n, 0);
    EXPECT_EQ_I(parse("0", &a, &j, NULL), TOSAC_OK);
    tosac_arena_deinit(&a);
}

static void hostile_text(void)
{
    static const struct {
        const char *text, *phrase;
    } cases[] = {
        {"", "unexpected end"},
        {"{", "expected a string key"},
        {"{\"a\" 1}", "expected ':'"},
        {"{\"a\": 1,}", "expected a string key"},
        {"[1, 2", "expected ','"},
        {"[01]", "expected ','"},
        {"\"abc", "unterminated string"},
        {"\"a\\x\"", "bad escape"},
        {"\"\\ud800\"", "lone surrogate"},
        {"\"\\u0000\"", "NUL character"},
        {"tru", "unexpected character"},
        {"{}\n  x", "line 2, column 3: trailing characters"},
        {"-", "bad number"},
        {"1.", "bad number"},
        {"\"a\tb\"", "control character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tosac_arena a;
        tosac_arena_init(&a);
        tosac_diag *d = tosac_diag_create();
        tosac_json *j = NULL;
        EXPECT_EQ_I(parse(cases[i].text, &a, &j, d), TOSAC_ERR_FORMAT);
        const char *m = tosac_diag_message(d, 0, NULL);
        if (!m || !strstr(m, cases[i].phrase)) {
            fprintf(stderr, "case %zu: message '%s' lacks '%s'\n", i, m ? m : "(none)", cases[i].phrase);
            EXPECT(0);
        }
        tosac_diag_destroy(d);
        tosac_arena_deinit(&a);
    }
    /* nesting bound: 10000 '[' fails cleanly instead of exhausting the stack */
    char deep[10001];
    memset(deep, '[', 10000);
    deep[10000] = 0;
    tosac_arena a;
    tosac_arena_init(&a);
    tosac_json *j = NULL;
    EXPECT_EQ_I(parse(deep, &a, &j, NULL), TOSAC_ERR_FORMAT);
    tosac_arena_deinit(&a);
}

int main(void)
{
    RUN(valid_documents);
    RUN(hostile_text);
    return test_summary();
}
