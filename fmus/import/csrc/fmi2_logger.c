/* The FMI 2.0 logger callback the importer hands to an FMU (fmi2CallbackLogger).
 *
 * fmi2CallbackLogger is variadic: the message is a printf format and the arguments follow
 * it. Stable Rust cannot define a variadic function, so this shim formats the message with
 * vsnprintf and passes the finished text to the Rust side (stiction_fmi2_log_sink in
 * fmus/import/src/binary.rs), which files it with the instance that logged it. */
#include <stdarg.h>
#include <stdio.h>

/* Defined in Rust: receives the formatted message. */
extern void stiction_fmi2_log_sink(void *env, const char *instance, int status, const char *category,
                                   const char *message);

/* Messages longer than this are cut (the host keeps a bounded log per instance anyway). */
#define STICTION_LOG_MAX 4096

void stiction_fmi2_logger(void *env, const char *instance, int status, const char *category, const char *message,
                          ...) {
    char text[STICTION_LOG_MAX];
    text[0] = '\0';
    if (message != NULL) {
        va_list args;
        va_start(args, message);
        vsnprintf(text, sizeof text, message, args);
        va_end(args);
    }
    stiction_fmi2_log_sink(env, instance, status, category, text);
}
